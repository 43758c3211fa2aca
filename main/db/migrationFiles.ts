import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One schema migration: its number, its file name and the SQL it runs. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The NNN_name.sql files of `dir`, in order of their numbers, which must run 1, 2, 3... without gaps. */
export function readMigrationFiles(dir: string): Migration[] {
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
