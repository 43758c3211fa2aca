import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * How big one file grows and how many full ones are kept beside it. VS Code keeps 30 MB of a log over 6 rotating
 * files (microsoft/vscode src/vs/platform/log/node/spdlogLog.ts); Signal keeps three old files beside main.log
 * (DEFAULT_MAX_ROTATIONS, signalapp/Signal-Desktop ts/util/rotatingPinoDest.ts). Here: 5 MB and three old ones.
 */
export interface RotationLimits {
  maxBytes: number;
  keep: number;
}

export const DEFAULT_LIMITS: RotationLimits = { maxBytes: 5 * 1024 * 1024, keep: 3 };

/** A rotation whose lock is older than this was left by a process that died in it; the next writer takes it over. */
const STALE_LOCK_MS = 10_000;
/** Lines kept while the folder's data folder does not exist yet (a first start makes it), written once it does. */
const HELD_LINES = 100;

/** The files of a log, newest first: `name.log`, then `name.log.1` up to `name.log.keep`, as Signal names them. */
export function rotatedNames(name: string, keep: number): string[] {
  return [`${name}.log`, ...Array.from({ length: keep }, (_, i) => `${name}.log.${i + 1}`)];
}

/** Whether a line of `bytes` would take a file of `size` past the cap. An empty file takes any line, however long. */
export function needsRotation(size: number, bytes: number, maxBytes: number): boolean {
  return size > 0 && size + bytes > maxBytes;
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/**
 * Appends `text` in one write. A write cut short (a full disk) leaves a line without its end, in this process or
 * another one on the folder; the next line then starts on a line of its own instead of being glued to it.
 */
function appendWhole(path: string, text: string): void {
  const fd = openSync(path, 'a+', 0o600);
  try {
    const size = fstatSync(fd).size;
    const last = Buffer.alloc(1);
    const cut = size > 0 && readSync(fd, last, 0, 1, size - 1) === 1 && last[0] !== 0x0a;
    writeSync(fd, cut ? `\n${text}` : text);
  } finally {
    closeSync(fd);
  }
}

/**
 * One log file that rotates at a size, written by any number of processes at once. Each line is appended by the
 * file's name in one write (O_APPEND), so lines of two processes never interleave within a line, and a line is on
 * disk before the call returns: a crash loses nothing logged before it. Nothing here throws, since a log must never
 * stop the studio: a line that cannot be written is dropped and the reason kept in `problem`, except while the data
 * folder is not there yet (a first start makes it), when the last lines are held and written with the next one.
 *
 * Two processes may find the file full at once. Rotation is done under a lock (a folder, made atomically) and the
 * size is looked at again under it, so the second finds a fresh file and leaves it alone. A rotation only renames,
 * oldest first; the current file becomes `.1` whole, and a line written meanwhile lands in it or in the new file,
 * never nowhere. Where a rename is refused (a file held open elsewhere on Windows) the line goes on into the current
 * file and the next line tries again, as Signal retries its rotation on EACCES and EPERM.
 */
export class RotatingFile {
  readonly path: string;
  problem: string | null = null;
  private held: string[] = [];

  constructor(
    readonly dir: string,
    readonly name: string,
    private readonly limits: RotationLimits = DEFAULT_LIMITS,
    /** Whether the folder's parents may be made too; where not, a log in a data folder that is gone makes no data folder. */
    private readonly makeParents = false,
  ) {
    if (!(limits.maxBytes > 0) || !Number.isInteger(limits.keep) || limits.keep < 1) throw new Error('a rotating log needs a size above 0 and at least one old file kept');
    this.path = join(dir, `${name}.log`);
  }

  append(line: string): void {
    const text = [...this.held, line].map((l) => `${l}\n`).join('');
    if (needsRotation(sizeOf(this.path), Buffer.byteLength(text), this.limits.maxBytes)) this.rotate(Buffer.byteLength(text));
    try {
      this.write(text);
      this.held = [];
      this.problem = null;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') this.held = [...this.held, line].slice(-HELD_LINES);
      this.problem = `the log file ${this.path} could not be written (${(err as Error).message})`;
    }
  }

  private write(text: string): void {
    try {
      appendWhole(this.path, text);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      mkdirSync(this.dir, { recursive: this.makeParents, mode: 0o700 });
      appendWhole(this.path, text);
    }
  }

  private rotate(bytes: number): void {
    const lock = `${this.path}.lock`;
    if (!this.takeLock(lock)) return;
    try {
      if (!needsRotation(sizeOf(this.path), bytes, this.limits.maxBytes)) return;
      const names = rotatedNames(this.name, this.limits.keep).map((n) => join(this.dir, n));
      for (let i = names.length - 1; i >= 1; i--) {
        if (existsSync(names[i - 1]!)) renameSync(names[i - 1]!, names[i]!);
      }
    } catch (err) {
      this.problem = `the log file ${this.path} could not be rotated yet (${(err as Error).message}); it grows until it can be`;
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }

  private takeLock(lock: string): boolean {
    for (let tries = 0; tries < 2; tries++) {
      try {
        mkdirSync(lock);
        return true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return false;
        let age: number;
        try {
          age = Date.now() - statSync(lock).mtimeMs;
        } catch {
          continue;
        }
        // Another process rotates now: this line goes into the current file, a little past the cap.
        if (age < STALE_LOCK_MS) return false;
        rmSync(lock, { recursive: true, force: true });
      }
    }
    return false;
  }
}
