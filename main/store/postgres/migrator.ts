import { fileURLToPath } from 'node:url';
import { type Migration, readMigrationFiles } from '../../db/migrationFiles.ts';
import { connect, type TeamPool } from './connection.ts';
import { requireDurable } from './durability.ts';
import { TeamDatabaseRefused } from './errors.ts';
import type { Sql } from './sql.ts';

export const POSTGRES_MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations/postgres/', import.meta.url));

export function loadMigrations(dir = POSTGRES_MIGRATIONS_DIR): Migration[] {
  return readMigrationFiles(dir);
}

/** What a database holds, judged before anything is written to it. */
export type DatabaseState = { kind: 'empty' } | { kind: 'foreign'; tables: string[] } | { kind: 'studio'; version: number };

/** Reads only: whether the database is empty, someone else's, or the studio's and at which schema. */
export async function inspect(sql: Sql): Promise<DatabaseState> {
  // pg_class read by a statement, not to_regclass: a statement sees what committed before it began, while a name
  // lookup may still answer from this connection's cache, from before the migration lock was granted.
  const [ours] = await sql.query<{ ours: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                     WHERE c.relname = 'studio_schema' AND n.nspname = current_schema()) AS ours`,
  );
  if (ours?.ours) {
    const [row] = await sql.query<{ version: number }>(`SELECT coalesce(max(version), 0) AS version FROM studio_schema`);
    return { kind: 'studio', version: row?.version ?? 0 };
  }
  // pg_class, not information_schema: a table this user may not read is someone's table all the same.
  const tables = await sql.query<{ name: string }>(
    `SELECT n.nspname || '.' || c.relname AS name
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
        AND n.nspname NOT IN ('pg_catalog', 'information_schema')
        AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp%'
      ORDER BY 1 LIMIT 4`,
  );
  return tables.length === 0 ? { kind: 'empty' } : { kind: 'foreign', tables: tables.map((t) => t.name) };
}

/** The refusal `state` earns from this studio, or null when it may go ahead. */
export function refusal(state: DatabaseState, known: number, where: string, purpose: 'init' | 'open'): string | null {
  if (state.kind === 'foreign') {
    const shown = state.tables.slice(0, 3).join(', ') + (state.tables.length > 3 ? ', ...' : '');
    return (
      `The team database ${where} is not a studio database: it has tables of its own (${shown}) and no studio_schema table. ` +
      'It was left untouched; point the studio at an empty database of its own (createdb studio), or at a studio one.'
    );
  }
  if (state.kind === 'studio' && state.version > known) {
    return (
      `The team database ${where} was written by a newer version of the studio (schema ${state.version}, this version knows ` +
      `${known}). It was left untouched; update the studio to open it.`
    );
  }
  if (state.kind === 'empty' && purpose === 'open') {
    return `The team database ${where} has no studio tables yet; run \`studio team init\` first to create them.`;
  }
  return null;
}

/** Every studio migrating one database takes this lock first, so one applies each migration and the others wait and see it done. */
const MIGRATION_LOCK = `hashtext('studio_schema')`;

/** A migration waits this long for another machine's migration (or a query holding its tables) before it gives up. */
const MIGRATION_LOCK_WAIT = '5min';

export interface Migrated {
  /** The schema found, under the migration lock when there was something to do. */
  from: number;
  to: number;
  /** True when this call created the studio's tables in an empty database. */
  created: boolean;
  /** How many migrations this call applied; the others, if any, another studio applied meanwhile. */
  applied: number;
}

/**
 * Applies each pending migration in its own transaction, recorded in studio_schema. Each transaction takes the
 * migration lock and judges the database again under it: another studio may have created or changed it since.
 */
export async function migrate(sql: Sql, migrations: Migration[], where: string, purpose: 'init' | 'open'): Promise<Migrated> {
  const first = await inspect(sql);
  const refused = refusal(first, migrations.length, where, purpose);
  if (refused) throw new TeamDatabaseRefused(refused);
  const seen = first.kind === 'studio' ? first.version : 0;
  let from: number | null = null;
  let created = false;
  let applied = 0;
  for (const m of migrations) {
    if (m.version <= seen) continue;
    await sql.tx(async (q) => {
      await q.query(`SET LOCAL lock_timeout = '${MIGRATION_LOCK_WAIT}'`);
      await q.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
      const now = await inspect(q);
      const again = refusal(now, migrations.length, where, purpose);
      if (again) throw new TeamDatabaseRefused(again);
      const version = now.kind === 'studio' ? now.version : 0;
      from ??= version;
      if (version >= m.version) return;
      if (now.kind === 'empty') {
        await q.query(`CREATE TABLE studio_schema (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`);
        created = true;
      }
      await q.query(m.sql);
      await q.query(
        `INSERT INTO studio_schema (version, name, applied_at) VALUES ($1, $2, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)`,
        [m.version, m.name],
      );
      applied += 1;
    });
  }
  return { from: from ?? seen, to: migrations.length, created, applied };
}

export interface TeamInit extends Migrated {
  where: string;
  /** What was done, for the person who ran `studio team init`. */
  message: string;
}

/**
 * `studio team init`: creates the studio's tables in an empty database, or brings a studio one up to date. A server
 * that cannot keep a committed write through a crash is refused first, untouched.
 */
export async function initTeamDatabase(url: string, migrationsDir?: string): Promise<TeamInit> {
  const migrations = loadMigrations(migrationsDir);
  const team = connect(url, { max: 1 });
  try {
    await requireDurable(team.sql, team.where);
    const done = await migrate(team.sql, migrations, team.where, 'init');
    const message = done.created
      ? `Created the studio's tables in ${team.where} (schema ${done.to}). Point each studio at it with --db or STUDIO_DATABASE_URL.`
      : done.applied === 0
        ? `${team.where} is already a studio database at schema ${done.to}; nothing was changed.`
        : `${team.where} was a studio database at schema ${done.from}; it is now at schema ${done.to}.`;
    return { ...done, where: team.where, message };
  } finally {
    await team.end();
  }
}

/**
 * A studio joining the team database: refuses an empty one (init it first), someone else's and a newer one,
 * all left untouched; brings an older studio schema up to date. The pool stays open for the stores.
 */
export async function openTeamDatabase(url: string, migrationsDir?: string): Promise<TeamPool & { migrated: Migrated }> {
  const migrations = loadMigrations(migrationsDir);
  const team = connect(url);
  try {
    await requireDurable(team.sql, team.where);
    return { ...team, migrated: await migrate(team.sql, migrations, team.where, 'open') };
  } catch (err) {
    await team.end();
    throw err;
  }
}
