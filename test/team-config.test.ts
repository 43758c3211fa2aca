import { describe, expect, it } from 'vitest';
import { parseSettings, SettingsError } from '../main/config/settings.ts';
import { chooseDatabase, chooseMachineName } from '../main/config/team.ts';
import { databaseUnavailable, describeDatabaseError } from '../main/engine/health.ts';
import { TeamDatabaseRefused, TeamDatabaseUnreachable } from '../main/store/postgres/errors.ts';
import { lostConnection } from '../main/store/postgres/connectionErrors.ts';
import { TablesChanged } from '../main/store/postgres/prepared.ts';

const A = 'postgres://ann:s3cret@db-a:5432/studio';
const B = 'postgresql://bob@db-b/studio';
const C = 'postgres://carl@db-c/studio';

describe('which database a studio uses', () => {
  it('takes --db first, then STUDIO_DATABASE_URL, then settings; none is the embedded store', () => {
    expect(chooseDatabase(A, { STUDIO_DATABASE_URL: B }, { databaseUrl: C })).toEqual({ url: A, from: 'flag' });
    expect(chooseDatabase(undefined, { STUDIO_DATABASE_URL: B }, { databaseUrl: C })).toEqual({ url: B, from: 'environment' });
    expect(chooseDatabase(undefined, { STUDIO_DATABASE_URL: '' }, { databaseUrl: C })).toEqual({ url: C, from: 'settings' });
    expect(chooseDatabase(undefined, {}, {})).toBeNull();
  });

  it('refuses an address that is not PostgreSQL, saying where it came from and how one is written, without its password', () => {
    const refused = (flag: string | undefined, env: NodeJS.ProcessEnv) => {
      try {
        chooseDatabase(flag, env, {});
      } catch (err) {
        expect(err).toBeInstanceOf(TeamDatabaseRefused);
        return (err as Error).message;
      }
      throw new Error('not refused');
    };
    expect(refused('mysql://ann:s3cret@db/studio', {})).toBe('--db: "mysql://ann@db/studio" is not a PostgreSQL address; write it like postgres://user:password@host:5432/studio');
    expect(refused(undefined, { STUDIO_DATABASE_URL: 'db-a:5432' })).toMatch(/^STUDIO_DATABASE_URL: "db-a:5432" is not a PostgreSQL address/);
  });

  it('settings.json team.databaseUrl must be a postgres:// or postgresql:// address; a bad one is named with what to do', () => {
    expect(parseSettings({ team: { databaseUrl: B, machineName: 'studio-b' } }).team).toEqual({ databaseUrl: B, machineName: 'studio-b' });
    expect(parseSettings({}).team).toEqual({});
    expect(() => parseSettings({ team: { databaseUrl: 'http://db/studio' } })).toThrow(
      new SettingsError(
        'settings: team.databaseUrl: "http://db/studio" is not a PostgreSQL address; write it like postgres://user:password@host:5432/studio; or remove it to use the database on this machine',
      ),
    );
    expect(() => parseSettings({ team: { databaseUrl: 5432 } })).toThrow(/team\.databaseUrl must be the team database's address/);
    expect(() => parseSettings({ team: { database: A } })).toThrow(/settings: team has no field "database"; it takes databaseUrl, machineName/);
    expect(() => parseSettings({ team: 'yes' })).toThrow(/settings: team must be an object/);
  });
});

describe("this machine's name", () => {
  it('is STUDIO_MACHINE_NAME, else settings team.machineName, else the computer name', () => {
    expect(chooseMachineName({ STUDIO_MACHINE_NAME: 'ann-laptop' }, { machineName: 'studio-a' }, 'box')).toEqual({ name: 'ann-laptop', from: 'environment' });
    expect(chooseMachineName({}, { machineName: 'studio-a' }, 'box')).toEqual({ name: 'studio-a', from: 'settings' });
    expect(chooseMachineName({}, {}, 'box.local')).toEqual({ name: 'box.local', from: 'computer' });
  });

  it('has no colon nor spaces, as it is part of owner ids; a bad one is refused with what a name may hold', () => {
    expect(() => chooseMachineName({ STUDIO_MACHINE_NAME: 'ann:laptop' }, {})).toThrow(
      new TeamDatabaseRefused('STUDIO_MACHINE_NAME: "ann:laptop" cannot name a machine: use 1 to 63 letters, digits, dots, dashes or underscores, starting with a letter or digit (like studio-laptop)'),
    );
    expect(() => parseSettings({ team: { machineName: 'Ann laptop' } })).toThrow(/settings: team\.machineName: "Ann laptop" cannot name a machine/);
    expect(() => parseSettings({ team: { machineName: 'x'.repeat(64) } })).toThrow(/cannot name a machine/);
  });
});

describe('the engine pauses for a team database in trouble, not for a task', () => {
  const at = 'the team database at postgres://ann@db-a:5432/studio';
  const sqlstate = (code: string, message = 'from the server') => Object.assign(new Error(message), { code });

  it('takes connection, shutdown, resource, lock-wait and deadlock failures as the database unavailable, in words', () => {
    const unreachable = new TeamDatabaseUnreachable('PostgreSQL at db-a:5432 refused the connection: check that PostgreSQL is running there.', 'ECONNREFUSED');
    expect(databaseUnavailable(unreachable)).toBe(true);
    expect(describeDatabaseError(unreachable, at)).toBe(`${at} cannot be reached: PostgreSQL at db-a:5432 refused the connection: check that PostgreSQL is running there`);
    for (const code of ['08006', '08001', '57P01', '57P02', '57P03', '53100', '53200', '53300', '55P03', '25P03', '40P01', '40001']) {
      expect(databaseUnavailable(sqlstate(code)), code).toBe(true);
    }
    expect(describeDatabaseError(sqlstate('55P03', 'canceling statement due to lock timeout'), at)).toBe(`another machine or program is holding rows of ${at} locked`);
    expect(describeDatabaseError(sqlstate('57P01', 'terminating connection due to administrator command'), at)).toBe(
      `${at} cannot be reached: its server is shutting down or restarting (57P01: terminating connection due to administrator command)`,
    );
    expect(describeDatabaseError(sqlstate('53300'), at)).toMatch(/has too many connections open; close some, or raise its max_connections$/);
    expect(describeDatabaseError(sqlstate('40P01'), at)).toMatch(/met another machine's on the same rows \(40P01\)/);
  });

  it("takes a transaction rolled back by another machine's column change as the database unavailable, retried, in words", () => {
    const changed = new TablesChanged(sqlstate('0A000', 'cached plan must not change result type'));
    expect(databaseUnavailable(changed)).toBe(true);
    expect(describeDatabaseError(changed, at)).toBe(
      `another machine's studio changed the columns of tables in ${at} under a write, which was rolled back and is made again on new connections`,
    );
    // The same SQLSTATE from anything else (a feature the server does not support) is the statement's own.
    expect(databaseUnavailable(sqlstate('0A000', 'cannot use a prepared statement here'))).toBe(false);
  });

  it("leaves a statement's own errors (a constraint, a refusal raised by the schema) and other programs' network errors to the task", () => {
    for (const code of ['23505', '23514', 'P0001', '42P01', '22P02']) expect(databaseUnavailable(sqlstate(code)), code).toBe(false);
    // A provider's connection reset is the provider's trouble; only the team database's own connections are turned into TeamDatabaseUnreachable.
    expect(databaseUnavailable(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe(false);
  });

  it("words a team database connection lost under a statement, and leaves the server's own errors alone", () => {
    const address = { host: 'db-a', port: 5432, user: 'ann', database: 'studio' };
    const lost = lostConnection(new Error('Connection terminated unexpectedly'), address);
    expect(lost).toBeInstanceOf(TeamDatabaseUnreachable);
    expect(lost?.message).toBe('the connection to PostgreSQL at db-a:5432 was lost (Connection terminated unexpectedly)');
    expect(lostConnection(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), address)?.code).toBe('ECONNRESET');
    expect(lostConnection(sqlstate('23505', 'duplicate key'), address)).toBeNull();
  });
});
