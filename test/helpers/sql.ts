import Database from 'better-sqlite3';
import { onTestFinished } from 'vitest';
import { databasePath } from '../../main/config/paths.ts';
import { openDatabase, type Db } from '../../main/db/database.ts';

/** A connection of its own to a data folder's database, for rows a test writes or reads by SQL; closed after the test. */
export function sqlOf(dataDir: string): Db {
  const db = openDatabase(databasePath(dataDir));
  onTestFinished(() => {
    db.close();
  });
  return db;
}

/** The rows of a query on a data folder's database, read through a read-only connection of its own. */
export function rowsOf(dataDir: string, sql: string): Record<string, any>[] {
  const db = new Database(databasePath(dataDir), { readonly: true });
  try {
    return db.prepare(sql).all() as Record<string, any>[];
  } finally {
    db.close();
  }
}
