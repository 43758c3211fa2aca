import { describe, expect, it } from 'vitest';
import { DatabaseClock } from '../main/adapters/databaseClock.ts';
import { clockStepped } from '../main/engine/clockOffset.ts';
import { sendWindow } from '../main/engine/reconciler.ts';
import type { Clock } from '../main/domain/ports.ts';
import type { Task } from '../main/domain/tasks/model.ts';

/** A machine's clocks as a test sets them: the wall clock can be stepped; the monotonic one only runs on. */
function machineClock() {
  const c = { wall: 1_000_000, mono: 50 };
  const clock: Clock = { now: () => c.wall, monotonic: () => c.mono, sleep: async () => undefined };
  return { c, clock };
}

describe('a step of the wall clock, told from the monotonic one', () => {
  it('is a move of the wall clock apart from the monotonic one past a second, either way; a sleep counts too', () => {
    const from = { wall: 10_000, mono: 0 };
    expect(clockStepped(from, { wall: 70_000, mono: 60_000 })).toBe(false);
    expect(clockStepped(from, { wall: 11_000, mono: 200 })).toBe(false);
    expect(clockStepped(from, { wall: 10_000 - 3 * 60_000, mono: 1_000 })).toBe(true);
    expect(clockStepped(from, { wall: 10_000 + 3_600_000, mono: 1_000 })).toBe(true);
  });
});

describe("the team database's clock as this machine reads it", () => {
  it('is unsettled from a step of the wall clock until it is measured again, and then reads the database\'s time', async () => {
    const { c, clock } = machineClock();
    const team = new DatabaseClock(clock);
    expect(team.settled()).toBe(false);
    await team.measure(async () => -3_600_000);
    expect(team.settled()).toBe(true);
    expect(team.now()).toBe(1_000_000 + 3_600_000);
    c.wall += 500;
    c.mono += 500;
    expect(team.settled()).toBe(true);
    // The person sets the clock right: an hour forward, while the monotonic clock moves 10 ms.
    c.wall += 3_600_000 + 10;
    c.mono += 10;
    expect(team.settled()).toBe(false);
    await team.measure(async () => 0);
    expect(team.settled()).toBe(true);
    expect(team.now()).toBe(c.wall);
  });

  it('stays unsettled when the wall clock is stepped while it is being measured', async () => {
    const { c, clock } = machineClock();
    const team = new DatabaseClock(clock);
    await team.measure(async () => {
      c.wall -= 60_000;
      return 0;
    });
    expect(team.settled()).toBe(false);
  });
});

describe('the send window a lookup searches', () => {
  const task = { createdAt: 0, submitStartedAt: 5_000_000 } as Task;
  it('ends when the task was parked, or now when it was not', () => {
    expect(sendWindow({ ...task, finishedAt: 5_002_000 }, 9_000_000)).toEqual({ from: 5_000_000, to: 5_002_000 });
    expect(sendWindow({ ...task, finishedAt: null }, 6_000_000)).toEqual({ from: 5_000_000, to: 6_000_000 });
  });
  it('never ends before the send started, even when it was parked by a clock stepped back', () => {
    expect(sendWindow({ ...task, finishedAt: 5_000_000 - 3_600_000 }, 9_000_000)).toEqual({ from: 5_000_000, to: 5_000_000 });
  });
});
