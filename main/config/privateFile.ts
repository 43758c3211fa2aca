import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readdirSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { alive } from '../media/staleParts.ts';

/**
 * Writes a file that holds a secret (provider keys, the host's token, settings with keys in them): readable by
 * this user alone, and whole or not at all.
 * - The content goes into a new file beside it, created exclusively with mode 0600, so the secret never sits in
 *   a file with wider permissions: not an earlier file's mode (a mode is applied only when a file is created),
 *   not a permissive umask (which can only take bits away).
 * - That file is flushed to the disk, then renamed over the old one, so a crash at any moment leaves the old
 *   file as it was or the new one whole; the folder is flushed after, so the rename itself survives a power cut.
 */
export function writePrivateFile(path: string, content: string | Uint8Array): void {
  const dir = dirname(path);
  const temporary = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const bytes = typeof content === 'string' ? Buffer.from(content) : content;
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    try {
      for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
  } catch (err) {
    // A part written to a full disk is not left to take the space.
    rmSync(temporary, { force: true });
    throw err;
  }
  syncFolder(dir);
  removeLeftovers(dir, basename(path));
}

/** A writer goes from its new file to the rename in milliseconds; one older than this was left by a writer that died. */
const LEFT_AFTER_MS = 60_000;
/** Older than this, a new file is a leftover whatever its writer's id says: ids are reused. */
const LEFT_WHATEVER_MS = 60 * 60 * 1000;

/**
 * Whether `entry`, in the folder of the file `name`, is the new file of a writer killed before its rename: named
 * as writePrivateFile names them, and older than a minute with its writer gone (a process of another container
 * sharing the folder looks gone from here, but its file is then only milliseconds old), or older than an hour.
 */
export function isLeftover(entry: string, name: string, ageMs: number, isAlive: (pid: number) => boolean = alive): boolean {
  const prefix = `.${name}.`;
  const match = entry.startsWith(prefix) ? /^(\d+)\.[0-9a-f]{8}\.tmp$/.exec(entry.slice(prefix.length)) : null;
  if (!match) return false;
  const pid = Number(match[1]);
  if (ageMs > LEFT_WHATEVER_MS) return true;
  return ageMs > LEFT_AFTER_MS && pid !== process.pid && !isAlive(pid);
}

/**
 * Removes what writers killed before their rename left: each holds a secret, and nothing else would ever remove it.
 * The save itself is done: a leftover that cannot be removed now (held open on Windows) is tried at the next one.
 */
function removeLeftovers(dir: string, name: string): void {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return;
  }
  const now = Date.now();
  for (const entry of entries) {
    try {
      const path = join(dir, entry);
      if (isLeftover(entry, name, now - statSync(path).mtimeMs)) rmSync(path, { force: true });
    } catch {
      // Gone meanwhile, or held: left for the next save.
    }
  }
}

/**
 * Flushes a folder's entries (a rename) to the disk. Windows cannot open a folder as a file, and some filesystems
 * (network shares, FUSE) refuse to sync one; there the rename is as durable as the system makes it.
 */
function syncFolder(dir: string): void {
  if (process.platform === 'win32') return;
  let fd: number;
  try {
    fd = openSync(dir, 'r');
  } catch {
    return;
  }
  try {
    fsyncSync(fd);
  } catch (err) {
    if (!['EINVAL', 'ENOTSUP', 'EOPNOTSUPP', 'EISDIR', 'EBADF'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err;
  } finally {
    closeSync(fd);
  }
}
