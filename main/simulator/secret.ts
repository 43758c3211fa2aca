import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';

const SECRET = /^[0-9a-f]{48}$/;

/** A secret for one simulator's run, where no folder keeps one. */
export const drawSecret = (): string => randomBytes(24).toString('hex');

/**
 * The secret every simulator on a job folder puts in its address, kept in `<dir>/secret` (0600): the simulators
 * of every process on a data folder share their jobs, so they share the one secret too, and an address a process
 * handed out stays good however many processes start after it. Made once, in a file of its own linked into place,
 * so processes starting at once agree on one. A file anyone but this user can read may have given it away, so it
 * is replaced (on Windows, with no such mode bits, the data folder sits in the user's own profile).
 */
export function folderSecret(dir: string): string {
  const path = join(dir, 'secret');
  const kept = readPrivate(path);
  if (kept !== null) return kept;
  const drawn = drawSecret();
  const draft = join(dir, `.secret.${process.pid}.${randomBytes(4).toString('hex')}`);
  const fd = openSync(draft, 'wx', 0o600);
  try {
    writeSync(fd, drawn);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(draft, path);
  } catch (err) {
    // EEXIST: another process placed its own first, which is kept if sound; one readable by others, or no secret,
    // is replaced. Without hard links (exFAT, FAT32, some shares) the last one renamed into place wins.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || readPrivate(path) === null) renameSync(draft, path);
  } finally {
    rmSync(draft, { force: true });
  }
  const placed = readPrivate(path);
  if (placed === null) throw new Error(`${path} could not be made to hold the simulator's secret; delete it and start again`);
  return placed;
}

/** The secret kept at `path`, or null where there is none this user alone can read. */
function readPrivate(path: string): string | null {
  try {
    const stats = statSync(path);
    if (process.platform !== 'win32' && (stats.uid !== process.getuid?.() || !keptPrivate(path, stats.mode))) return null;
    const text = readFileSync(path, 'utf8').trim();
    return SECRET.test(text) ? text : null;
  } catch {
    return null;
  }
}

/**
 * Whether a file of `mode` has been this user's alone. One others could read may have given its secret away; but
 * where the folder's file system has no modes of its own (FAT, exFAT, some shares show every file as 0755 or 0777
 * whatever is asked), a file just made 0600 shows as open as this one, and the secret is as private as that folder
 * can make it.
 */
function keptPrivate(path: string, mode: number): boolean {
  if ((mode & 0o077) === 0) return true;
  const probe = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.probe`;
  try {
    closeSync(openSync(probe, 'wx', 0o600));
    return (statSync(probe).mode & 0o077) !== 0;
  } catch {
    return false;
  } finally {
    rmSync(probe, { force: true });
  }
}
