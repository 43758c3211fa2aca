import { mkdtempSync, readdirSync, copyFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { redactUrl } from '../main/store/postgres/address.ts';
import { connect } from '../main/store/postgres/connection.ts';
import { TeamDatabaseRefused, TeamDatabaseUnreachable } from '../main/store/postgres/errors.ts';
import { initTeamDatabase, loadMigrations, openTeamDatabase, POSTGRES_MIGRATIONS_DIR } from '../main/store/postgres/migrator.ts';
import { openPostgresStore } from '../main/store/postgres/store.ts';
import { dumpDatabase, freshDatabase, postgresAvailable, queryRows } from './helpers/postgres.ts';
import { freePort } from './helpers/ports.ts';

const folders: string[] = [];
afterAll(() => folders.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** The studio's migrations and one more, as a later version of the studio would have them. */
function laterMigrations(): string {
  const dir = mkdtempSync(join(tmpdir(), 'studio-pg-migrations-'));
  folders.push(dir);
  for (const name of readdirSync(POSTGRES_MIGRATIONS_DIR)) copyFileSync(join(POSTGRES_MIGRATIONS_DIR, name), join(dir, name));
  const next = String(readdirSync(dir).length + 1).padStart(3, '0');
  writeFileSync(join(dir, `${next}_later.sql`), `CREATE TABLE later_things (id BIGINT PRIMARY KEY);\nALTER TABLE projects ADD COLUMN later_note TEXT;\n`);
  return dir;
}

describe('redactUrl', () => {
  it('removes the password wherever the address carries it', () => {
    expect(redactUrl('postgres://ann:s3cret@db.example:5432/studio')).toBe('postgres://ann@db.example:5432/studio');
    expect(redactUrl('postgresql://ann@db/studio?password=s3cret&sslmode=require')).toBe('postgresql://ann@db/studio?sslmode=require');
    expect(redactUrl('postgres://ann:s3cret@db:5432/studio%')).not.toContain('s3cret');
  });
});

const KNOWN = loadMigrations();

describe.skipIf(!postgresAvailable)('the team database: schema and migrations', () => {
  it('creates the schema in an empty database, once, and says so', async () => {
    const url = await freshDatabase({ empty: true });
    const first = await initTeamDatabase(url);
    expect(first).toMatchObject({ created: true, from: 0, applied: first.to });
    expect(first.message).toMatch(new RegExp(`^Created the studio's tables in postgres://studio@127\\.0\\.0\\.1:\\d+/\\w+ \\(schema ${KNOWN.length}\\)`));
    const versions = await queryRows(url, `SELECT version, name, applied_at FROM studio_schema ORDER BY version`);
    expect(versions.map((v) => [v.version, v.name])).toEqual(KNOWN.map((m) => [m.version, m.name]));
    expect(Math.abs(Number(versions[0]!.applied_at) - Date.now())).toBeLessThan(60_000);
    const tables = await queryRows<{ table_name: string }>(url, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`);
    expect(tables.map((t) => t.table_name)).toEqual(expect.arrayContaining(['projects', 'tasks', 'task_events', 'lease_owners', 'studio_schema', 'takes']));

    const before = dumpDatabase(url);
    const again = await initTeamDatabase(url);
    expect(again).toMatchObject({ created: false, applied: 0 });
    expect(again.message).toContain(`is already a studio database at schema ${KNOWN.length}; nothing was changed`);
    expect(dumpDatabase(url)).toBe(before);
  });

  it('two machines initialising one database at once apply the schema once', async () => {
    const url = await freshDatabase({ empty: true });
    const results = await Promise.all([initTeamDatabase(url), initTeamDatabase(url), initTeamDatabase(url)]);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    // Each migration is its own transaction under the lock, so which machine applies which may interleave: each once.
    expect(results.reduce((sum, r) => sum + r.applied, 0)).toBe(KNOWN.length);
    expect(await queryRows(url, `SELECT version FROM studio_schema ORDER BY version`)).toEqual(KNOWN.map((m) => ({ version: m.version })));
  });

  it('a studio joining an older studio schema brings it up to date, once however many start at once', async () => {
    const url = await freshDatabase();
    const later = laterMigrations();
    const teams = await Promise.all([openTeamDatabase(url, later), openTeamDatabase(url, later)]);
    await Promise.all(teams.map((t) => t.end()));
    expect(teams.map((t) => t.migrated.applied).sort()).toEqual([0, 1]);
    expect(teams.map((t) => t.migrated.to)).toEqual([KNOWN.length + 1, KNOWN.length + 1]);
    expect((await queryRows(url, `SELECT version, name FROM studio_schema ORDER BY version`)).map((r) => r.name)).toEqual([
      ...KNOWN.map((m) => m.name),
      `${String(KNOWN.length + 1).padStart(3, '0')}_later.sql`,
    ]);
    expect(await queryRows(url, `SELECT count(*)::int AS n FROM later_things`)).toEqual([{ n: 0 }]);
  });

  it('a studio joining an empty database is told to run studio team init, and creates nothing', async () => {
    const url = await freshDatabase({ empty: true });
    const before = dumpDatabase(url);
    await expect(openTeamDatabase(url)).rejects.toThrow(TeamDatabaseRefused);
    await expect(openPostgresStore(url)).rejects.toThrow(/has no studio tables yet; run `studio team init` first/);
    expect(dumpDatabase(url)).toBe(before);
  });

  it("refuses a database of someone else's and leaves it exactly as it was", async () => {
    const url = await freshDatabase({ empty: true });
    await queryRows(
      url,
      `CREATE TABLE customers (id SERIAL PRIMARY KEY, name TEXT NOT NULL, since DATE);
       INSERT INTO customers (name, since) VALUES ('Ada', '2020-01-02'), ('Grace', NULL);
       CREATE SCHEMA billing; CREATE TABLE billing.invoices (n INT);`,
    );
    const before = dumpDatabase(url);
    expect(before).toContain('Grace');
    for (const attempt of [() => initTeamDatabase(url), () => openTeamDatabase(url), () => openPostgresStore(url)]) {
      const err = await attempt().then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(TeamDatabaseRefused);
      expect((err as Error).message).toMatch(/is not a studio database: it has tables of its own \(billing\.invoices, public\.customers\) and no studio_schema table\. It was left untouched/);
    }
    expect(dumpDatabase(url)).toBe(before);
  });

  it('refuses a schema newer than this studio knows, as the embedded store words it, and leaves it alone', async () => {
    const url = await freshDatabase();
    const next = KNOWN.length + 1;
    await queryRows(url, `INSERT INTO studio_schema (version, name, applied_at) VALUES (${next}, 'next.sql', 0), (${next + 1}, 'after.sql', 0)`);
    const before = dumpDatabase(url);
    for (const attempt of [() => initTeamDatabase(url), () => openTeamDatabase(url), () => openPostgresStore(url)]) {
      await expect(attempt()).rejects.toThrow(
        `was written by a newer version of the studio (schema ${next + 1}, this version knows ${KNOWN.length}). It was left untouched; update the studio to open it.`,
      );
    }
    expect(dumpDatabase(url)).toBe(before);
  });
});

describe.skipIf(!postgresAvailable)('the team database: reaching it', () => {
  /** One line of words, no stack, no password. */
  async function refusedWith(url: string): Promise<string> {
    const err = await openTeamDatabase(url).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(TeamDatabaseUnreachable);
    const message = (err as Error).message;
    expect(message).not.toMatch(/\n|\bat .*\.js:\d+|s3cret/);
    return message;
  }

  it('says what to check when nothing listens on the port', async () => {
    const port = await freePort();
    expect(await refusedWith(`postgres://studio:s3cret@127.0.0.1:${port}/studio`)).toBe(
      `PostgreSQL at 127.0.0.1:${port} refused the connection: check that PostgreSQL is running there, that it listens on port ${port} (listen_addresses, port) and that the host and port in the address are right.`,
    );
  });

  it('names a database that does not exist, and a user the server does not know', async () => {
    const url = new URL(await freshDatabase());
    url.pathname = '/no_such_db';
    expect(await refusedWith(url.toString())).toBe(
      `PostgreSQL at 127.0.0.1:${url.port} has no database "no_such_db": create it (createdb) or fix the database name in the address.`,
    );
    url.pathname = '/postgres';
    url.username = 'nobody';
    url.password = 's3cret';
    expect(await refusedWith(url.toString())).toMatch(/refused the connection: role "nobody" does not exist\. Check the user in the address/);
  });

  it('refuses an address that is not PostgreSQL before connecting', async () => {
    await expect(openTeamDatabase('mysql://ann:s3cret@db/studio')).rejects.toThrow(
      '"mysql://ann@db/studio" is not a PostgreSQL address; write it like postgres://user:password@host:5432/studio',
    );
  });
});

describe.skipIf(!postgresAvailable)('the team database: connections', () => {
  it('reads BIGINT and sums of it as numbers, and refuses one it cannot hold exactly', async () => {
    const team = connect(await freshDatabase({ empty: true }));
    try {
      const [row] = await team.sql.query(`SELECT 9007199254740991::bigint AS big, sum(x) AS total, array_agg(x) AS all FROM (VALUES (1::bigint), (2::bigint)) v(x)`);
      expect(row).toEqual({ big: 9007199254740991, total: 3, all: [1, 2] });
      await expect(team.sql.query(`SELECT 9007199254740993::bigint AS n`)).rejects.toThrow(RangeError);
    } finally {
      await team.end();
    }
  });

  it('rolls a transaction back when its function throws, and the connection goes back to the pool', async () => {
    const url = await freshDatabase();
    const team = connect(url, { max: 1 });
    try {
      await team.sql.query(`INSERT INTO projects (name, created_at) VALUES ('kept', 1)`);
      const boom = new Error('changed my mind');
      await expect(
        team.sql.tx(async (q) => {
          await q.query(`INSERT INTO projects (name, created_at) VALUES ('dropped', 1)`);
          await q.tx((inner) => inner.query(`UPDATE projects SET budget = 5 WHERE name = 'kept'`));
          throw boom;
        }),
      ).rejects.toBe(boom);
      // One connection in the pool: this would wait for ever had the transaction kept it.
      expect(await team.sql.query(`SELECT name, budget FROM projects ORDER BY id`)).toEqual([{ name: 'kept', budget: null }]);
      await expect(team.sql.tx((q) => q.query(`INSERT INTO projects (name, created_at) VALUES ('', 1)`))).rejects.toThrow(/check constraint/);
      expect(await team.sql.query(`SELECT count(*) AS n FROM projects`)).toEqual([{ n: 1 }]);
    } finally {
      await team.end();
    }
  });

  it('a transaction whose connection is cut fails, and the next statement gets a working one', async () => {
    const team = connect(await freshDatabase(), { max: 1 });
    try {
      await expect(
        team.sql.tx(async (q) => {
          await q.query(`INSERT INTO projects (name, created_at) VALUES ('cut', 1)`);
          await q.query(`SELECT pg_terminate_backend(pg_backend_pid())`);
        }),
      ).rejects.toThrow();
      expect(await team.sql.query(`SELECT count(*) AS n FROM projects`)).toEqual([{ n: 0 }]);
    } finally {
      await team.end();
    }
  });

  it('waitForLocks bounds how long a statement waits for a row another machine holds', async () => {
    const url = await freshDatabase();
    const [a, b] = [await openPostgresStore(url), await openPostgresStore(url)];
    try {
      const project = await a.projects.ensure('held', 1);
      let release!: () => void;
      const holding = a.transaction(async (tx) => {
        await tx.projects.lock(project.id);
        await new Promise<void>((resolve) => (release = resolve));
      });
      await new Promise((r) => setTimeout(r, 50));
      b.waitForLocks(100);
      const started = Date.now();
      await expect(b.projects.setBudget(project.id, 1)).rejects.toMatchObject({ code: '55P03' });
      expect(Date.now() - started).toBeLessThan(2_000);
      b.waitForLocks();
      const waited = b.projects.setBudget(project.id, 2);
      await new Promise((r) => setTimeout(r, 300));
      release();
      await holding;
      await waited;
      expect((await b.projects.byName('held'))!.budget).toBe(2);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe.skipIf(!postgresAvailable)('the cluster the tests run on', () => {
  it('runs as a server of its own on 127.0.0.1 with UTF-8', async () => {
    const url = await freshDatabase({ empty: true });
    const [row] = await queryRows(url, `SELECT current_setting('listen_addresses') AS listen, pg_encoding_to_char(encoding) AS encoding FROM pg_database WHERE datname = current_database()`);
    expect(row).toEqual({ listen: '127.0.0.1', encoding: 'UTF8' });
  });
});
