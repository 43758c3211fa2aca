import { describe, expect, it } from 'vitest';
import { clockWarning, comparedWith, describeOffset } from '../main/engine/clockOffset.ts';
import { durabilityRefusal } from '../main/store/postgres/durability.ts';

describe("a machine's clock against the team database's, in words", () => {
  it('says how far and which way, rounding without ever writing 60 of a unit', () => {
    expect(describeOffset(240)).toBe('0.2 s');
    expect(describeOffset(-12_340)).toBe('12.3 s behind');
    expect(describeOffset(180_400)).toBe('3 min 0 s ahead');
    expect(describeOffset(7_199_000)).toBe('2 h 0 min ahead');
    expect(comparedWith(-3_600_000, "the database's")).toBe("1 h 0 min behind the database's");
    expect(comparedWith(400, "the database's")).toBe("within 0.4 s of the database's");
  });

  it('warns only past 10 s, saying which way, how far and what to do', () => {
    expect(clockWarning(10_000)).toBeNull();
    expect(clockWarning(-10_000)).toBeNull();
    expect(clockWarning(10_500)).toBe(
      "this computer's clock is 10.5 s ahead of the team database's. The studio keeps the team's times by the database's clock, " +
        "so nothing is sent or looked up at the wrong time, but set this computer's clock right: turn on automatic date and time (network time) in its settings.",
    );
    expect(clockWarning(-3_600_000)).toMatch(/^this computer's clock is 1 h 0 min behind the team database's\./);
  });
});

describe('a team database server that could lose a committed write', () => {
  const safe = { fsync: 'on', fullPageWrites: 'on', synchronousCommit: 'on' };
  it('is accepted with fsync and full_page_writes on and a session that waits for the local flush', () => {
    for (const synchronousCommit of ['on', 'local', 'remote_write', 'remote_apply']) expect(durabilityRefusal({ ...safe, synchronousCommit }, 'db')).toBeNull();
  });
  it('is refused naming the one setting to turn on, first fsync, then full_page_writes, then the session', () => {
    expect(durabilityRefusal({ fsync: 'off', fullPageWrites: 'off', synchronousCommit: 'off' }, 'db')).toMatch(/runs with fsync = off: .*ALTER SYSTEM SET fsync = on;/);
    expect(durabilityRefusal({ ...safe, fullPageWrites: 'off' }, 'db')).toMatch(/runs with full_page_writes = off: .*ALTER SYSTEM SET full_page_writes = on;/);
    expect(durabilityRefusal({ ...safe, synchronousCommit: 'off' }, 'db')).toMatch(/kept synchronous_commit = off for the studio's session/);
  });
});
