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
 * A migration that makes a table again (SQLite changes no constraint in place) says so on a line of its own; it
 * runs with foreign keys off, as sqlite.org/lang_altertable.html ("Making Other Kinds Of Table Schema Changes")
 * requires, so dropping the old table deletes nothing that refers to it, and every reference is checked before
 * the commit.
 */
const FOREIGN_KEYS_OFF = /^-- migrate: foreign keys off$/m;

/**
 * Applies each pending migration in its own transaction; the schema version lives in user_version. The
 * version is read again inside each write transaction: another process opening the same new database at the
 * same moment may have applied it since this one looked.
 */
export function migrate(db: Database.Database, migrations: Migration[]): number {
  const current = assertKnownVersion(db, migrations);
  const latest = migrations.length;
  for (const m of migrations.slice(current)) {
    const rebuild = FOREIGN_KEYS_OFF.test(m.sql);
    // foreign_keys cannot change inside a transaction: set before it, put back after.
    const keys = db.pragma('foreign_keys', { simple: true }) as number;
    if (rebuild) db.pragma('foreign_keys = OFF');
    try {
      db.transaction(() => {
        if ((db.pragma('user_version', { simple: true }) as number) >= m.version) return;
        db.exec(m.sql);
        const broken = rebuild ? (db.pragma('foreign_key_check') as unknown[]) : [];
        if (broken.length > 0) throw new Error(`Migration ${m.name} would leave ${broken.length} reference(s) to rows that are not there; nothing was changed`);
        db.pragma(`user_version = ${m.version}`);
      }).immediate();
    } finally {
      if (rebuild) db.pragma(`foreign_keys = ${keys ? 'ON' : 'OFF'}`);
    }
  }
  return latest;
}
