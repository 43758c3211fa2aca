import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadMigrations } from '../main/store/postgres/migrator.ts';
import { dumpDatabase, freshDatabase, postgresAvailable, queryRows } from './helpers/postgres.ts';
import { freePort } from './helpers/ports.ts';
import { runStudio, writeSettings } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';

const SCHEMA = loadMigrations().length;

/** Without a password, the address as the studio prints it is the address itself. */
const shown = (url: string) => url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const ENQUEUE = ['enqueue', '--project', 'Film', '--kind', 'image', '--provider', 'simulator', '--model', 'sim-image-1', '--input', '{"prompt":"a fox"}'];

/** One line on stderr, exit 2, nothing on stdout. */
function refusedOnce(result: { code: number | null; stdout: string; stderr: string }): string {
  expect(result.code, result.stderr).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
  return result.stderr.trimEnd();
}

describe.skipIf(!postgresAvailable)('studio team init', () => {
  it('creates the schema in an empty database and says so in one line; again, says it is already one', async () => {
    const url = await freshDatabase({ empty: true });
    const dataDir = tempDir();
    const first = await runStudio(dataDir, ['team', 'init', '--db', url]);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout).toMatch(new RegExp(`^Created the studio's tables in ${shown(url)} \\(schema ${SCHEMA}\\)\\.[^\\n]*\\n$`));
    expect(await queryRows(url, 'SELECT max(version) AS v FROM studio_schema')).toEqual([{ v: SCHEMA }]);

    const before = dumpDatabase(url);
    const again = await runStudio(dataDir, ['--db', url, 'team', 'init']);
    expect(again).toMatchObject({ code: 0, stderr: '', stdout: `${url} is already a studio database at schema ${SCHEMA}; nothing was changed.\n` });
    expect(dumpDatabase(url)).toBe(before);
    // It opened no studio: the data folder has no database of its own.
    expect(existsSync(join(dataDir, 'studio.db'))).toBe(false);
  });

  it("refuses someone else's database and a newer studio schema in one line, exit 2, and leaves each byte for byte", async () => {
    const foreign = await freshDatabase({ empty: true });
    await queryRows(foreign, `CREATE TABLE customers (id SERIAL PRIMARY KEY, name TEXT); INSERT INTO customers (name) VALUES ('Ada')`);
    const newer = await freshDatabase();
    await queryRows(newer, `INSERT INTO studio_schema (version, name, applied_at) VALUES ($1, 'next.sql', 0)`, [SCHEMA + 1]);
    const dataDir = tempDir();
    for (const [url, words] of [
      [foreign, /is not a studio database: it has tables of its own \(public\.customers\) and no studio_schema table\. It was left untouched/],
      [newer, new RegExp(`was written by a newer version of the studio \\(schema ${SCHEMA + 1}, this version knows ${SCHEMA}\\)\\. It was left untouched`)],
    ] as const) {
      const before = dumpDatabase(url);
      expect(refusedOnce(await runStudio(dataDir, ['team', 'init', '--db', url]))).toMatch(words);
      expect(dumpDatabase(url)).toBe(before);
    }
  });

  it('needs a team database to be named, and says how', async () => {
    const result = await runStudio(tempDir(), ['team', 'init']);
    expect(refusedOnce(result)).toBe('studio: name the team database with --db postgres://user:password@host:5432/studio (or set STUDIO_DATABASE_URL)');
    expect(refusedOnce(await runStudio(tempDir(), ['team', 'join']))).toBe('studio: studio team takes init or status or push, not "join"');
  });
});

describe.skipIf(!postgresAvailable)('joining a team database', () => {
  it('a studio pointed at an empty database is told to run studio team init first, and creates nothing there', async () => {
    const url = await freshDatabase({ empty: true });
    const before = dumpDatabase(url);
    const dataDir = tempDir();
    for (const command of [['tasks'], ['worker', '--until-idle'], ENQUEUE]) {
      expect(refusedOnce(await runStudio(dataDir, ['--db', url, ...command]))).toBe(
        `studio: The team database ${url} has no studio tables yet; run \`studio team init\` first to create them.`,
      );
    }
    expect(dumpDatabase(url)).toBe(before);
  });

  it('a team database that cannot be reached is said in one line, exit 2, with no password', async () => {
    const port = await freePort();
    const refused = refusedOnce(await runStudio(tempDir(), ['--db', `postgres://ann:s3cret@127.0.0.1:${port}/studio`, 'tasks']));
    expect(refused).toBe(
      `studio: PostgreSQL at 127.0.0.1:${port} refused the connection: check that PostgreSQL is running there, that it listens on port ${port} (listen_addresses, port) and that the host and port in the address are right.`,
    );
  });

  it('takes --db, then STUDIO_DATABASE_URL, then settings, and keeps no database file in the data folder', async () => {
    const [flag, env, saved] = [await freshDatabase(), await freshDatabase(), await freshDatabase()];
    const dataDir = tempDir();
    writeSettings(dataDir, { team: { databaseUrl: saved } });
    const tasksIn = async (url: string) => (await queryRows<{ n: number }>(url, 'SELECT count(*)::int AS n FROM tasks'))[0]!.n;

    expect((await runStudio(dataDir, ['--db', flag, ...ENQUEUE], { STUDIO_DATABASE_URL: env })).code).toBe(0);
    expect((await runStudio(dataDir, ENQUEUE, { STUDIO_DATABASE_URL: env })).code).toBe(0);
    expect((await runStudio(dataDir, ENQUEUE)).code).toBe(0);
    expect((await runStudio(dataDir, ENQUEUE)).code).toBe(0);
    expect([await tasksIn(flag), await tasksIn(env), await tasksIn(saved)]).toEqual([1, 1, 2]);
    expect(existsSync(join(dataDir, 'studio.db'))).toBe(false);

    // A command that only reads what is there finds it in the team database, from a data folder of its own.
    const listed = await runStudio(tempDir(), ['--db', saved, 'tasks', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as unknown[]).length).toBe(2);
  });

  it('refuses an address that is not PostgreSQL, naming where it came from: --db and the environment exit 2, settings exit 1', async () => {
    const dataDir = tempDir();
    expect(refusedOnce(await runStudio(dataDir, ['--db', 'mysql://ann:s3cret@db/studio', 'tasks']))).toBe(
      'studio: --db: "mysql://ann@db/studio" is not a PostgreSQL address; write it like postgres://user:password@host:5432/studio',
    );
    expect(refusedOnce(await runStudio(dataDir, ['tasks'], { STUDIO_DATABASE_URL: 'db:5432' }))).toMatch(/^studio: STUDIO_DATABASE_URL: "db:5432" is not a PostgreSQL address/);
    writeSettings(dataDir, { team: { databaseUrl: 'http://db/studio' } });
    const bad = await runStudio(dataDir, ['tasks']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe('studio: settings: team.databaseUrl: "http://db/studio" is not a PostgreSQL address; write it like postgres://user:password@host:5432/studio; or remove it to use the database on this machine\n');
  });

  it('a worker goes by STUDIO_MACHINE_NAME, else settings team.machineName; a name that cannot be one is refused', async () => {
    const url = await freshDatabase();
    const dataDir = tempDir();
    writeSettings(dataDir, { team: { machineName: 'studio-desk' } });
    const named = await runStudio(dataDir, ['--db', url, 'worker', '--until-idle'], { STUDIO_MACHINE_NAME: 'ann-laptop' });
    expect(named.stderr).toMatch(new RegExp(`^worker: started as ann-laptop:\\d+:[0-9a-f]{8} on the team database at ${shown(url)}\\n`));
    const saved = await runStudio(dataDir, ['--db', url, 'worker', '--until-idle']);
    expect(saved.stderr).toMatch(/^worker: started as studio-desk:\d+:/);
    expect(refusedOnce(await runStudio(dataDir, ['--db', url, 'worker', '--until-idle'], { STUDIO_MACHINE_NAME: 'ann laptop' }))).toMatch(
      /^studio: STUDIO_MACHINE_NAME: "ann laptop" cannot name a machine/,
    );
  });
});

describe.skipIf(!postgresAvailable)('studio team status', () => {
  it('names the database, its schema and the machines with a studio on it', async () => {
    const url = await freshDatabase();
    const dataDir = tempDir();
    writeSettings(dataDir, { team: { databaseUrl: url } });
    const empty = await runStudio(dataDir, ['team', 'status']);
    expect(empty).toMatchObject({ code: 0, stderr: '' });
    const [where, schema, durability, clock, ...rest] = empty.stdout.split('\n');
    expect([where, schema, durability, ...rest]).toEqual([
      `team database: ${url}`,
      `schema: ${SCHEMA}`,
      "durability: fsync on, full_page_writes on, synchronous_commit on (for the studio's sessions)",
      'machines: none has a studio on it now',
      '',
    ]);
    // This computer and the database's server are one machine here: their clocks agree within a round trip.
    expect(clock).toMatch(/^this computer's clock: within 0\.[0-9] s of the database's$/);

    // Each machine's clock as its latest process measured it: one an hour ahead, one not measured yet.
    await queryRows(
      url,
      `INSERT INTO lease_owners (id, hostname, pid, started_at, seen_at, clock_offset_ms, clock_checked_at) VALUES
         ('studio-a:10:aa', 'studio-a', 10, 1767225600000, 1767225600000, 1200, 1767225600000),
         ('studio-a:11:bb', 'studio-a', 11, 1767229200000, 1767229200000, 3600000, 1767229200000),
         ('studio-b:12:cc', 'studio-b', 12, 1767232800000, 1767232800000, NULL, NULL)`,
    );
    const seen = await runStudio(dataDir, ['team', 'status']);
    expect(seen.stdout.split('\n').slice(4)).toEqual([
      "machines with a studio on it (running, or stopped without a clean exit); clock: the machine's less the database's:",
      'machine   processes  since                     clock',
      'studio-a  2          2026-01-01T00:00:00.000Z  1 h 0 min ahead (set it right)',
      'studio-b  1          2026-01-01T02:00:00.000Z  not measured',
      '',
    ]);
  });

  it('refuses a database no studio could join, as joining would', async () => {
    const url = await freshDatabase({ empty: true });
    expect(refusedOnce(await runStudio(tempDir(), ['--db', url, 'team', 'status']))).toMatch(/has no studio tables yet; run `studio team init` first/);
  });
});
