import type { Db } from '../../db/database.ts';

/** This database's own id (migration 012). */
export function databaseIdOf(db: Db): string {
  return db.prepare(`SELECT id FROM database_identity`).pluck().get() as string;
}
