import type { Db } from '../../db/database.ts';
import { earlierOf } from './databaseHome.ts';

/** This database's own id (migration 012). */
export function databaseIdOf(db: Db): string {
  return db.prepare(`SELECT id FROM database_identity`).pluck().get() as string;
}

/** This database's id and those it had before it was copied (migration 013): a receipt naming any of them is its own. */
export function databaseIdsOf(db: Db): string[] {
  return [databaseIdOf(db), ...earlierOf(db, 'id')];
}
