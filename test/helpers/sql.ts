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
