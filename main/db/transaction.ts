import type { Statement } from 'better-sqlite3';
import type { Db } from './database.ts';

/**
 * BEGIN IMMEDIATE ... COMMIT with statements prepared once. better-sqlite3's db.transaction() builds
 * four wrapper functions per call, which on the engine's hot path cost more than the writes themselves.
 * A call made inside another transaction becomes a savepoint, so a batch of calls commits once.
 */
export function immediateTransactions(db: Db): <T>(fn: () => T) => T {
  const s = (sql: string): Statement => db.prepare(sql);
  const begin = s('BEGIN IMMEDIATE');
  const commit = s('COMMIT');
  const rollback = s('ROLLBACK');
  const savepoint = s('SAVEPOINT nested');
  const release = s('RELEASE nested');
  const rollbackTo = s('ROLLBACK TO nested');
  return <T>(fn: () => T): T => {
    const nested = db.inTransaction;
    (nested ? savepoint : begin).run();
    try {
      const result = fn();
      (nested ? release : commit).run();
      return result;
    } catch (err) {
      if (db.inTransaction) {
        if (nested) {
          rollbackTo.run();
          release.run();
        } else rollback.run();
      }
      throw err;
    }
  };
}
