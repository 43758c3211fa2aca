import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from './database.ts';
import { DatabaseRefused } from './database.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const migrations = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .map((name) => {
      const match = /^(\d+)_/.exec(name);
      if (!match) throw new Error(`Migration ${name} must start with its number, like 002_name.sql`);
      return { version: Number(match[1]), name, sql: readFileSync(join(dir, name), 'utf8') };
    })
    .sort((a, b) => a.version - b.version);
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`Migrations must be numbered 1, 2, 3... without gaps; found ${m.name}`);
  });
  return migrations;
}

/** Refuses a schema newer than this version knows. Reads only, so a refused file is left as it was. */
export function assertKnownVersion(db: Db, migrations: Migration[]): number {
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
export function migrate(db: Db, migrations: Migration[]): number {
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
