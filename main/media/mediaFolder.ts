import { existsSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { placesOf, type Folders } from '../domain/storedPaths.ts';

export { isAbsoluteAnywhere } from '../domain/storedPaths.ts';

/**
 * Where this studio saves the files it is paid for, and how a path kept in a row is found on this machine.
 *
 * A shared media folder is mounted at a different place on each machine of a team, so a file saved in it is kept
 * in its row relative to the folder (with forward slashes, whatever the machine) and found again under this
 * machine's mount. A studio with no media folder keeps its files in its data folder, relative to it the same way,
 * so a data folder that moves (a new disk, another user name, a restored backup) loses nothing. A path kept
 * absolute, as rows were before, is read where it was saved, else at its place in the layout here (see placesOf).
 *
 * Each database writes under a folder of its own (`space`) in the media folder: task and project ids are numbered
 * per database, so two databases saving into one folder would otherwise give two different files one name.
 */
export interface MediaFolder {
  /** The folder relative paths are taken from. */
  root: string;
  /** Where this studio writes: the database's own folder in the media folder, or the data folder. */
  base: string;
  /** Where it wrote under the media spaces its database had before it was copied (see Store.earlier). */
  earlierBases: readonly string[];
  /** Whether `root` is a media folder that was set (and may be shared), rather than the data folder. */
  shared: boolean;
  /** The name this machine goes by, recorded with each file it saves. */
  machine: string;
  /** This machine's id, recorded beside its name (see config/machineId.ts); absent where no studio opened the folder. */
  machineId?: string;
  /** The path to keep in a row for a file saved at `path`. */
  stored(path: string): string;
  /** Every place the file a row names may be on this machine, most likely first. */
  places(stored: string): string[];
  /** Where the file a row names is on this machine: the first of its places that exists, else the first. */
  resolve(stored: string): string;
}

/** `path` inside `root`, with forward slashes, or null when it is not inside. */
export function inside(root: string, path: string): string | null {
  const rel = relative(resolve(root), resolve(path));
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return null;
  return rel.split(sep).join('/');
}

function folderAt(folders: Folders, shared: boolean, machine: string, earlierBases: readonly string[] = []): MediaFolder {
  const places = (stored: string) => placesOf(stored, folders);
  return {
    root: folders.root,
    base: folders.base,
    earlierBases,
    shared,
    machine,
    stored: (path) => inside(folders.root, path) ?? path,
    places,
    resolve: (stored) => {
      const all = places(stored);
      return all.find((p) => existsSync(p)) ?? all[0]!;
    },
  };
}

/**
 * Files in the data folder, kept relative to it: the studio on its own, with no media folder set. `earlier`: media
 * folders set before, where rows saved then name their files (relative to that folder).
 */
export function dataFolderMedia(dataDir: string, machine: string, earlier: readonly string[] = []): MediaFolder {
  const root = resolve(dataDir);
  return folderAt({ root, base: root, home: root, earlier }, false, machine);
}

/**
 * Files in `root`/`space`, kept relative to `root`. `home` is the data folder, where files saved before the media
 * folder was set still are; `earlier`, the media folders set before; `earlierSpaces`, the spaces the database had
 * before it was copied.
 */
export function mediaFolderAt(
  root: string,
  space: string,
  machine: string,
  shared: boolean,
  home: string = root,
  earlier: readonly string[] = [],
  earlierSpaces: readonly string[] = [],
): MediaFolder {
  const absolute = resolve(root);
  const bases = earlierSpaces.map((s) => join(absolute, s));
  return folderAt({ root: absolute, base: join(absolute, space), home: resolve(home), earlier, earlierSpaces }, shared, machine, bases);
}
