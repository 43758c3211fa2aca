import { readFileSync, rmSync, writeFileSync } from 'node:fs';

/**
 * A database upgrade (pending migrations) can hold the write lock for a long time on a large studio. The process
 * doing it leaves a note beside the file, so another studio opening it meanwhile can say an upgrade is under way and
 * to wait, instead of "locked by another program". The note names the process; a note left by one that is gone
 * (killed mid-upgrade: its transaction rolled back) says nothing.
 */
const markerOf = (path: string) => `${path}-upgrading`;

export interface Upgrade {
  pid: number;
  from: number;
  to: number;
}

/** Runs `upgrade` with the note in place; `say` tells the person it is upgrading (it may take a while). */
export function whileUpgrading<T>(path: string, from: number, to: number, say: (words: string) => void, upgrade: () => T): T {
  if (path === ':memory:' || from >= to) return upgrade();
  // Another studio upgrading it (or making it: then this one finds it part made): this one waits its turn for the
  // lock, and the note stays that studio's.
  if (upgradeUnderWay(path)) return upgrade();
  // A new database (schema 0) is made in a moment: nothing to say, but the note is left for a studio opening it too.
  if (from > 0) say(`studio: upgrading the database ${path} (schema ${from} to ${to}); on a large studio this takes a minute or more, do not stop it`);
  writeFileSync(markerOf(path), JSON.stringify({ pid: process.pid, from, to } satisfies Upgrade));
  try {
    return upgrade();
  } finally {
    rmSync(markerOf(path), { force: true });
  }
}

/** The upgrade another live process is making of this database, or null. */
export function upgradeUnderWay(path: string): Upgrade | null {
  try {
    const note = JSON.parse(readFileSync(markerOf(path), 'utf8')) as Upgrade;
    if (note.pid === process.pid) return null;
    process.kill(note.pid, 0);
    return note;
  } catch {
    return null;
  }
}
