import { fileURLToPath } from 'node:url';
import { type Migration, readMigrationFiles } from './migrationFiles.ts';
import type Database from 'better-sqlite3';
import { DatabaseRefused } from './refused.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readMigrationFiles(dir);
}

/** Refuses a schema newer than this version knows. Reads only, so a refused file is left as it was. */
export function assertKnownVersion(db: Database.Database, migrations: Migration[]): number {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > migrations.length) {
    throw new DatabaseRefused(
      `This database was written by a newer version of the studio (schema ${current}, this version knows ` +
        `${migrations.length}). It was left untouched; update the studio to open it.`,
    );
  }
  return current;
}

/**
 * Applies each pending migration in its own transaction; the schema version lives in user_version. The
 * version is read again inside each write transaction: another process opening the same new database at the
 * same moment may have applied it since this one looked.
 */
export function migrate(db: Database.Database, migrations: Migration[]): number {
  const current = assertKnownVersion(db, migrations);
  const latest = migrations.length;
  for (const m of migrations.slice(current)) {
    db.transaction(() => {
      if ((db.pragma('user_version', { simple: true }) as number) >= m.version) return;
      db.exec(m.sql);
      db.pragma(`user_version = ${m.version}`);
    }).immediate();
  }
  return latest;
}
