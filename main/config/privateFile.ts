import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

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
