import { randomBytes } from 'node:crypto';
import { realpathSync, statSync } from 'node:fs';
import type { Db } from '../../db/database.ts';

/** Where a database file is: its real path, and the device and inode of the file there (as strings: they may pass 2^53). */
export interface Home {
  path: string;
  dev: string;
  ino: string;
}

/**
 * What opening a database file at `here` says about the home recorded in it (migration 013).
 * - `first`: none recorded yet.
 * - `same`: the same path and the same file.
 * - `moved`: another path, the same file (renamed or moved on its filesystem).
 * - `copied`: another file, which the original may still be using: a copy, or a backup put in place of a folder moved
 *   aside. A move to another disk reads the same; it only costs the database a new id and media space, and what it
 *   sent and saved before is still found under the earlier ones.
 */
export type HomeChange = 'first' | 'same' | 'moved' | 'copied';

export function homeChange(recorded: Home | undefined, here: Home): HomeChange {
  if (!recorded) return 'first';
  // A device number may change from one mount to the next (a drive plugged in again); an inode on it does not.
  if (recorded.path === here.path) return recorded.ino === here.ino ? 'same' : 'copied';
  return recorded.dev === here.dev && recorded.ino === here.ino ? 'moved' : 'copied';
}

export function homeOf(path: string): Home {
  const real = realpathSync(path);
  const { dev, ino } = statSync(real, { bigint: true });
  return { path: real, dev: String(dev), ino: String(ino) };
}

/**
 * Records where the database file at `path` is, and gives a copy its own database id and media space, keeping the
 * earlier ones (see HomeChange). Done in one immediate transaction, so processes opening a fresh copy at once draw
 * one id and one space between them. Returns the change.
 */
export function settleHome(db: Db, path: string): HomeChange {
  const here = homeOf(path);
  const read = db.prepare(`SELECT path, dev, ino FROM database_home`);
  const unchanged = (recorded: Home | undefined) => !!recorded && homeChange(recorded, here) === 'same' && recorded.dev === here.dev;
  // Read first: an opening that changes nothing takes no write lock, so it never waits on another process's writes.
  if (unchanged(read.get() as Home | undefined)) return 'same';
  return db
    .transaction((): HomeChange => {
      const recorded = read.get() as Home | undefined;
      const change = homeChange(recorded, here);
      if (unchanged(recorded)) return change;
      if (change === 'copied') {
        db.prepare(`INSERT OR IGNORE INTO database_earlier (kind, name) SELECT 'id', id FROM database_identity`).run();
        db.prepare(`INSERT OR IGNORE INTO database_earlier (kind, name) SELECT 'space', name FROM media_space`).run();
        db.prepare(`UPDATE database_identity SET id = ?`).run(randomBytes(16).toString('hex'));
        db.prepare(`UPDATE media_space SET name = ?`).run(`local-${randomBytes(6).toString('hex')}`);
      }
      db.prepare(`INSERT INTO database_home (one, path, dev, ino) VALUES (1, @path, @dev, @ino) ON CONFLICT (one) DO UPDATE SET path = @path, dev = @dev, ino = @ino`).run(here);
      return change;
    })
    .immediate();
}

/** The ids or media spaces this database had before it was copied. */
export function earlierOf(db: Db, kind: 'id' | 'space'): string[] {
  return db.prepare(`SELECT name FROM database_earlier WHERE kind = ?`).pluck().all(kind) as string[];
}
