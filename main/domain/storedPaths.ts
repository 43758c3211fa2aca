import { join, posix, win32 } from 'node:path';

/**
 * Where a path kept in a row may be, decided from the path alone. The studio saves every file it is paid for in
 * one layout under the folder that holds it: `projects/<id>/media/<file>`, `projects/<id>/renders/<file>` or
 * `rescued/<file>`. Rows written before paths were kept relative name the whole path, on whatever machine and
 * system saved it; their place in the layout is what is left once the old folder's name is taken off.
 */

/** A path any machine reads as absolute: a POSIX one, or a Windows one with a drive or a share. */
export function isAbsoluteAnywhere(path: string): boolean {
  return posix.isAbsolute(path) || win32.isAbsolute(path);
}

/** A POSIX path splits on "/" only (a backslash may be part of a name there); a Windows one on either. */
function segments(path: string): string[] {
  return posix.isAbsolute(path) ? path.split('/') : path.split(/[\\/]/);
}

/**
 * The end of an absolute `path` that is in the studio's layout, with forward slashes: the path relative to the
 * folder that holds it, whichever that is now. Null for a path relative already, or outside the layout (which
 * says nothing of where it is now). Only the last segments are read, so an old folder whose own name holds
 * "projects" or "rescued" does not confuse it.
 */
export function layoutTail(path: string): string | null {
  if (!isAbsoluteAnywhere(path)) return null;
  const parts = segments(path);
  const n = parts.length;
  const file = parts[n - 1]!;
  if (file === '' || file === '.' || file === '..') return null;
  if (n > 4 && parts[n - 4] === 'projects' && /^\d+$/.test(parts[n - 3]!) && (parts[n - 2] === 'media' || parts[n - 2] === 'renders')) {
    return parts.slice(n - 4).join('/');
  }
  if (n > 2 && parts[n - 2] === 'rescued') return `rescued/${file}`;
  return null;
}

const under = (folder: string, relative: string) => join(folder, ...relative.split('/'));

/**
 * What a row's absolute `path` becomes when its data folder opens: its place in the layout, relative to `dataDir`,
 * only when the file is no longer at `path` but is at that place under `dataDir` (the folder moved); else null, and
 * the row keeps `path`, so a file still where the row names it (only the database carried elsewhere, or a file the
 * studio wrote at its old place after the folder moved) is never made one that is lost.
 */
export function movedRelative(path: string, dataDir: string, exists: (path: string) => boolean): string | null {
  const tail = layoutTail(path);
  if (tail === null || exists(path) || !exists(under(dataDir, tail))) return null;
  return tail;
}

/** The folders a stored path is read against (see MediaFolder). */
export interface Folders {
  /** What relative paths are taken from: the media folder, or the data folder when none is set. */
  root: string;
  /** Where this database writes within `root`. */
  base: string;
  /** The data folder, where files saved before a media folder was set stay. */
  home: string;
  /** Media folders this studio saved into before, where files it saved then stay (see mediaFolders.ts). */
  earlier?: readonly string[];
  /**
   * The spaces of `root` its database had before it was copied: a file a row names in one of them is read first at
   * the same place in `base`, where the copy gave it a name of its own (see keepInheritedFiles).
   */
  earlierSpaces?: readonly string[];
}

/**
 * Every place the file a row names may be on this machine, most likely first, each once. A relative path is
 * under the media folder, or under the data folder if it was saved before a media folder was set, or under a media
 * folder set before. An absolute
 * one is where it was saved, else, after its folder moved, at its place in the layout under this machine's folders.
 */
export function placesOf(stored: string, at: Folders): string[] {
  if (!isAbsoluteAnywhere(stored)) {
    const [space, ...rest] = stored.split('/');
    const own = at.earlierSpaces?.includes(space!) && rest.length > 0 ? [under(at.base, rest.join('/'))] : [];
    return [...new Set([...own, ...[at.root, at.home, ...(at.earlier ?? [])].map((folder) => under(folder, stored))])];
  }
  const tail = layoutTail(stored);
  return [...new Set(tail === null ? [stored] : [stored, under(at.base, tail), under(at.home, tail)])];
}
