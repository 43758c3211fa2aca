import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The media folders this data folder's studio has saved into, kept in the data folder: rows name their files
 * relative to the media folder, so once it is unset (or another is set) they are still looked for in each. The list
 * is kept twice, so one copy spoilt (emptied by a crash, or edited by hand) forgets nothing the other holds.
 */
const COPIES = ['media-folders.json', 'media-folders.copy.json'];

type Copy = { file: string; folders: string[] | null; problem: string | null };

/** One copy of the list: its folders, none when it does not exist, or null with the problem when it cannot be read. */
function readCopy(dataDir: string, name: string): Copy {
  const file = join(dataDir, name);
  if (!existsSync(file)) return { file, folders: [], problem: null };
  try {
    const list = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    if (Array.isArray(list) && list.every((f) => typeof f === 'string')) return { file, folders: list, problem: null };
    return { file, folders: null, problem: `${file} is not a list of folders` };
  } catch (err) {
    return { file, folders: null, problem: `${file} cannot be read (${(err as Error).message})` };
  }
}

/** Every media folder remembered in either copy, oldest first. */
export function mediaFoldersUsed(dataDir: string): string[] {
  return [...new Set(COPIES.flatMap((name) => readCopy(dataDir, name).folders ?? []))];
}

/** Written whole through a synced temporary file and renamed, so a crash leaves the old list or the new, never an empty one. */
function writeSynced(file: string, text: string): void {
  const part = `${file}.part`;
  const fd = openSync(part, 'w', 0o600);
  try {
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(part, file);
  } catch (err) {
    // A half-written list (a full disk) is not left behind to take the space.
    rmSync(part, { force: true });
    throw err;
  }
  const dir = openSync(join(file, '..'), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}

/**
 * Adds `folder` to each copy that lacks a folder either remembers. A copy that cannot be read is never written over
 * (what it holds may still be recovered by hand), and a copy that cannot be written (a full disk) is left as it was:
 * the studio opens all the same. Returns what went wrong, in words for the log; empty when nothing did.
 */
export function rememberMediaFolder(dataDir: string, folder: string): string[] {
  const copies = COPIES.map((name) => readCopy(dataDir, name));
  const all = [...new Set([...copies.flatMap((c) => c.folders ?? []), folder])];
  const problems: string[] = [];
  for (const copy of copies) {
    if (copy.folders === null) {
      problems.push(`${copy.problem}; it is left as it is, and the media folders are remembered in the other copy`);
      continue;
    }
    if (all.every((f) => copy.folders!.includes(f))) continue;
    try {
      writeSynced(copy.file, JSON.stringify(all, null, 2));
    } catch (err) {
      problems.push(`the media folder ${folder} could not be remembered in ${copy.file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  }
  return problems;
}
