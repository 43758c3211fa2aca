import { isAbsolute, join, posix, relative, resolve, sep, win32 } from 'node:path';

/**
 * Where this studio saves the files it is paid for, and how a path kept in a row is found on this machine.
 *
 * A shared media folder is mounted at a different place on each machine of a team, so a file saved in it is kept
 * in its row relative to the folder (with forward slashes, whatever the machine) and found again under this
 * machine's mount. A studio with no media folder keeps its files in its data folder under absolute paths, as it
 * always did; an absolute path in a row is read as it is.
 *
 * Each database writes under a folder of its own (`space`) in the media folder: task and project ids are numbered
 * per database, so two databases saving into one folder would otherwise give two different files one name.
 */
export interface MediaFolder {
  /** The folder relative paths are taken from. */
  root: string;
  /** Where this studio writes: the database's own folder in the media folder, or the data folder. */
  base: string;
  /** Whether `root` is a media folder that was set (and may be shared), rather than the data folder. */
  shared: boolean;
  /** The name this machine goes by, recorded with each file it saves. */
  machine: string;
  /** The path to keep in a row for a file saved at `path`. */
  stored(path: string): string;
  /** Where the file a row names is on this machine. */
  resolve(stored: string): string;
}

/** A path any machine reads as absolute: a POSIX one, or a Windows one with a drive or a share. */
export function isAbsoluteAnywhere(path: string): boolean {
  return posix.isAbsolute(path) || win32.isAbsolute(path);
}

/** `path` inside `root`, with forward slashes, or null when it is not inside. */
export function inside(root: string, path: string): string | null {
  const rel = relative(resolve(root), resolve(path));
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return null;
  return rel.split(sep).join('/');
}

function resolveIn(root: string, stored: string): string {
  return isAbsoluteAnywhere(stored) ? stored : join(root, ...stored.split('/'));
}

/** Files in the data folder, kept under absolute paths: the studio on its own, with no media folder set. */
export function dataFolderMedia(dataDir: string, machine: string): MediaFolder {
  const root = resolve(dataDir);
  return { root, base: root, shared: false, machine, stored: (path) => path, resolve: (stored) => resolveIn(root, stored) };
}

/** Files in `root`/`space`, kept relative to `root`. */
export function mediaFolderAt(root: string, space: string, machine: string, shared: boolean): MediaFolder {
  const absolute = resolve(root);
  return {
    root: absolute,
    base: join(absolute, space),
    shared,
    machine,
    stored: (path) => inside(absolute, path) ?? path,
    resolve: (stored) => resolveIn(absolute, stored),
  };
}
