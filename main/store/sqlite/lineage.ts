import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Which databases of a data folder are one line of copies. A copy draws a new id (see settleHome) and its receipts go
 * to `receipts/<id>/`, so a backup of its database file taken before that id was drawn, restored into the folder,
 * would not know the id its own requests were journalled under, and would send them again. So each id a copy draws
 * is written down in the data folder beside its receipts, with the ids it came from (`receipts/<id>/lineage.json`);
 * a database reading the folder takes as its own every id that shares an id with it, through any chain of copies.
 * Receipts still name their task by its identity (input hash and creation time), so a sibling copy's receipt is only
 * ever applied to the very task both copies inherited, whose request it is.
 */
export interface Lineage {
  /** That id and the ids its database had before. */
  ids: readonly string[];
  /** The media spaces of that database, then those it had before: where the results of its requests are. */
  spaces: readonly string[];
}

/** The ids and spaces of `lineages` linked to `own` by a shared id, through any chain; `own`'s first. */
export function kinOf(own: Lineage, lineages: readonly Lineage[]): Lineage {
  const ids = new Set(own.ids);
  const spaces = new Set(own.spaces);
  for (let grew = true; grew; ) {
    grew = false;
    for (const line of lineages) {
      if (line.ids.some((id) => ids.has(id)) && [...line.ids.filter((id) => !ids.has(id)), ...line.spaces.filter((s) => !spaces.has(s))].length > 0) {
        for (const id of line.ids) ids.add(id);
        for (const space of line.spaces) spaces.add(space);
        grew = true;
      }
    }
  }
  return { ids: [...ids], spaces: [...spaces] };
}

const ID = /^[0-9a-f]{32}$/;

/** Every lineage written in the data folder; a file cut short or damaged is passed over. */
export function lineagesIn(dataDir: string): Lineage[] {
  const root = join(dataDir, 'receipts');
  let names: string[];
  try {
    names = readdirSync(root).filter((n) => ID.test(n));
  } catch {
    return [];
  }
  return names.flatMap((id) => {
    try {
      const line = JSON.parse(readFileSync(join(root, id, 'lineage.json'), 'utf8')) as { ids?: unknown; spaces?: unknown };
      const ids = line.ids;
      const spaces = Array.isArray(line.spaces) ? line.spaces.filter((x): x is string => typeof x === 'string' && /^local-[0-9a-f]+$/.test(x)) : [];
      return Array.isArray(ids) && ids.every((x) => typeof x === 'string' && ID.test(x)) ? [{ ids: [id, ...ids.filter((x) => x !== id)], spaces }] : [];
    } catch {
      return [];
    }
  });
}

/** Writes `line` (the new id first) as the lineage of its id's folder, synced, through a temporary file. */
export function writeLineage(dataDir: string, line: Lineage): void {
  const dir = join(dataDir, 'receipts', line.ids[0]!);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const temp = join(dir, `lineage.${randomBytes(4).toString('hex')}.tmp`);
  const fd = openSync(temp, 'w', 0o600);
  try {
    writeSync(fd, JSON.stringify(line));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, join(dir, 'lineage.json'));
  // The rename reaches the disk with its folder, before the new id is committed.
  const folder = openSync(dir, 'r');
  try {
    fsyncSync(folder);
  } finally {
    closeSync(folder);
  }
}

/** Removes the lineage of an id that was never committed (its transaction failed), so no later opening takes it. */
export function dropLineage(dataDir: string, id: string): void {
  rmSync(join(dataDir, 'receipts', id), { recursive: true, force: true });
}
