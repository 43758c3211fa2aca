import { existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { BUSY_TIMEOUT_MS, openDatabase, type Db } from '../../db/database.ts';
import { connect } from '../../db/nativeBinding.ts';
import type { ChangeProbe, Store, Stores } from '../port.ts';
import { TransactionGate } from './gate.ts';
import { movedRelative } from '../../domain/storedPaths.ts';
import { databaseIdOf } from './databaseId.ts';
import { earlierOf, settleHome } from './databaseHome.ts';
import { mediaSpaceOf } from './mediaSpace.ts';
import { SqliteOwnerStore } from './ownerStore.ts';
import { SqliteProjectStore } from './projectStore.ts';
import { SqliteStoryboardStore } from './storyboardStore.ts';
import { SqliteTakeStore } from './takeStore.ts';
import { SqliteTaskStore } from './taskStore.ts';

/** The database file at `path` is not the one opened (same device and inode), said for the person. */
function movedSince(path: string, opened: { dev: number; ino: number }): string | null {
  let now;
  try {
    now = statSync(path);
  } catch {
    return `the studio database ${path} was deleted while the studio runs; nothing more is claimed. Put it back (its recent writes are in ${path}-wal), then restart the studio`;
  }
  return now.dev === opened.dev && now.ino === opened.ino
    ? null
    : `the studio database ${path} was replaced while the studio runs; restart the studio (nothing is claimed until then)`;
}

/**
 * Changes to the file at `path` by any connection, this process's included: SQLite's data_version moves only for
 * commits of other connections, so the probe reads through a read-only connection of its own.
 */
export function watchSqliteFile(path: string): ChangeProbe {
  const db = connect(path, { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 2000');
  const version = db.prepare('PRAGMA data_version').pluck();
  const unknown = db.prepare(`SELECT count(*) FROM tasks WHERE status = 'OUTCOME_UNKNOWN'`).pluck();
  return {
    read: async () => ({ mark: String(version.get()), needsDecision: unknown.get() as number }),
    close: async () => {
      db.close();
    },
  };
}

function storesOn(db: Db, machine: string | undefined, machineId: string | undefined): Stores {
  return {
    tasks: new SqliteTaskStore(db, machine, machineId ?? null),
    projects: new SqliteProjectStore(db),
    storyboards: new SqliteStoryboardStore(db),
    takes: new SqliteTakeStore(db),
    owners: new SqliteOwnerStore(db),
  };
}

/**
 * The embedded store: one SQLite file, one connection. A transaction holds the connection from BEGIN IMMEDIATE
 * to COMMIT while its function awaits, so every other call of this process waits at the gate until it ends;
 * the stores the function is given go straight to the connection.
 */
export function openSqliteStore(path: string, options: { machine?: string; machineId?: string } = {}): Store {
  const db = openDatabase(path);
  const opened = statSync(path);
  settleHome(db, path);
  // Rows from before paths were kept relative to the data folder, so one that moved since loses nothing.
  new SqliteTaskStore(db).relativizePaths((kept) => movedRelative(kept, dirname(path), existsSync));
  const direct = storesOn(db, options.machine, options.machineId);
  const gate = new TransactionGate();
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');
  return {
    kind: 'sqlite',
    where: path,
    mediaSpace: mediaSpaceOf(db),
    databaseId: databaseIdOf(db),
    earlier: { databaseIds: earlierOf(db, 'id'), spaces: earlierOf(db, 'space') },
    tasks: gate.guard(direct.tasks, ['onClaimable']),
    projects: gate.guard(direct.projects),
    storyboards: gate.guard(direct.storyboards),
    takes: gate.guard(direct.takes),
    owners: gate.guard(direct.owners),
    transaction: (fn) =>
      gate.hold(async () => {
        begin.run();
        try {
          const result = await fn(direct);
          commit.run();
          return result;
        } catch (err) {
          if (db.inTransaction) rollback.run();
          throw err;
        }
      }),
    moved: () => movedSince(path, opened),
    waitForLocks: (ms) => {
      db.pragma(`busy_timeout = ${ms ?? BUSY_TIMEOUT_MS}`);
    },
    watch: () => watchSqliteFile(path),
    close: async () => {
      db.close();
    },
  };
}
