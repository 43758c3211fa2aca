import { randomBytes } from 'node:crypto';
import { realpathSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Db } from '../../db/database.ts';
import { dropLineage, kinOf, lineagesIn, writeLineage, type Lineage } from './lineage.ts';

/**
 * Where a database file is: its real path, the device and inode of the file there (as strings: they may pass 2^53), and
 * when the file was made, in nanoseconds, where the filesystem keeps that (null where it does not, or before 014).
 */
export interface Home {
  path: string;
  dev: string;
  ino: string;
  born: string | null;
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
  // A device number may change from one mount to the next (a drive plugged in again), and on exFAT or FAT drives an
  // inode number too; the time the file was made does not, and a copy put in its place was made later.
  if (recorded.path === here.path) return recorded.ino === here.ino || (here.born !== null && recorded.born === here.born) ? 'same' : 'copied';
  return recorded.dev === here.dev && recorded.ino === here.ino ? 'moved' : 'copied';
}

export function homeOf(path: string): Home {
  const real = realpathSync(path);
  const { dev, ino, birthtimeNs } = statSync(real, { bigint: true });
  return { path: real, dev: String(dev), ino: String(ino), born: birthtimeNs > 0n ? String(birthtimeNs) : null };
}

/**
 * Records where the database file at `path` is, and gives a copy its own database id and media space, keeping the
 * earlier ones (see HomeChange). Done in one immediate transaction, so processes opening a fresh copy at once draw
 * one id and one space between them. The new id's lineage is written beside its receipts before the transaction
 * commits (see lineage.ts); when it cannot be (a full disk), nothing changes until the next opening, and the files the
 * copy saves meanwhile are still never put over another's (see placeWithoutReplacing). Then the ids of the data
 * folder's other databases of one line are taken as this one's (a backup restored after a later copy drew its id).
 * A database that cannot be written (a read-only file) is left as it is: it sends and saves nothing. Returns the change.
 */
export function settleHome(db: Db, path: string): HomeChange {
  const change = recordHome(db, path);
  try {
    takeKin(db, dirname(path));
  } catch (err) {
    if (!NOT_NOW.has(String((err as { code?: unknown }).code))) throw err;
  }
  return change;
}

/** This database's id and media space, then those it had before. */
function lineageOf(db: Db): Lineage {
  return {
    ids: [db.prepare(`SELECT id FROM database_identity`).pluck().get() as string, ...earlierOf(db, 'id')],
    spaces: [db.prepare(`SELECT name FROM media_space`).pluck().get() as string, ...earlierOf(db, 'space')],
  };
}

function recordHome(db: Db, path: string): HomeChange {
  const here = homeOf(path);
  const read = db.prepare(`SELECT path, dev, ino, born FROM database_home`);
  const unchanged = (recorded: Home | undefined) =>
    !!recorded && homeChange(recorded, here) === 'same' && recorded.dev === here.dev && recorded.ino === here.ino && recorded.born === here.born;
  // Read first: an opening that changes nothing takes no write lock, so it never waits on another process's writes.
  if (unchanged(read.get() as Home | undefined)) return 'same';
  let drawn: string | null = null;
  const record = db.transaction((): HomeChange => {
    const recorded = read.get() as Home | undefined;
    const change = homeChange(recorded, here);
    if (unchanged(recorded)) return change;
    if (change === 'copied') {
      const [id, space] = [randomBytes(16).toString('hex'), `local-${randomBytes(6).toString('hex')}`];
      const before = lineageOf(db);
      drawn = id;
      writeLineage(dirname(path), { ids: [id, ...before.ids], spaces: [space, ...before.spaces] });
      db.prepare(`INSERT OR IGNORE INTO database_earlier (kind, name) SELECT 'id', id FROM database_identity`).run();
      db.prepare(`INSERT OR IGNORE INTO database_earlier (kind, name) SELECT 'space', name FROM media_space`).run();
      db.prepare(`UPDATE database_identity SET id = ?`).run(id);
      db.prepare(`UPDATE media_space SET name = ?`).run(space);
    }
    db.prepare(
      `INSERT INTO database_home (one, path, dev, ino, born) VALUES (1, @path, @dev, @ino, @born)
       ON CONFLICT (one) DO UPDATE SET path = @path, dev = @dev, ino = @ino, born = @born`,
    ).run(here);
    return change;
  });
  try {
    return record.immediate();
  } catch (err) {
    if (drawn !== null) dropLineage(dirname(path), drawn);
    if (NOT_NOW.has(String((err as { code?: unknown }).code))) return 'same';
    throw err;
  }
}

/**
 * What leaves a copy with the id and space it came with until the next opening: the lineage or the database could not
 * be written (a full disk, a folder or file the person cannot write). Its files are still never put over another's.
 */
const NOT_NOW = new Set(['ENOSPC', 'EDQUOT', 'EACCES', 'EPERM', 'EROFS', 'SQLITE_FULL', 'SQLITE_READONLY', 'SQLITE_READONLY_DBMOVED', 'SQLITE_IOERR_WRITE']);

/** Takes as this database's own the ids and spaces of the data folder that share a lineage with it (see lineage.ts). */
function takeKin(db: Db, dataDir: string): void {
  const own = lineageOf(db);
  const kin = kinOf(own, lineagesIn(dataDir));
  const ids = kin.ids.filter((id) => !own.ids.includes(id));
  const spaces = kin.spaces.filter((space) => !own.spaces.includes(space));
  if (ids.length + spaces.length === 0) return;
  const add = db.prepare(`INSERT OR IGNORE INTO database_earlier (kind, name) VALUES (?, ?)`);
  db.transaction(() => {
    for (const id of ids) add.run('id', id);
    for (const space of spaces) add.run('space', space);
  }).immediate();
}

/** The ids or media spaces this database had before it was copied. */
export function earlierOf(db: Db, kind: 'id' | 'space'): string[] {
  return db.prepare(`SELECT name FROM database_earlier WHERE kind = ?`).pluck().all(kind) as string[];
}
