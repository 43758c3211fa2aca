import { createHash } from 'node:crypto';
import { readdir, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';

/** A part file untouched this long is no live copy's: a copy writes to it all the time. */
const ABANDONED_MS = 60 * 60 * 1000;

/** This machine, as a part file names its writer's: a shared media folder holds other machines' part files too. */
export const MACHINE = createHash('sha256').update(hostname()).digest('hex').slice(0, 8);

/** The tail a part file of this process is named with: its writer (process and machine) and a random part. */
export const partTail = (random: string) => `${process.pid}@${MACHINE}-${random}.part`;

/** The writer a part file's name carries (`NAME.<pid>@<machine>-<hex>.part`, `upload-<pid>@<machine>-<hex>.part`), or null. */
const writerOf = (name: string): { pid: number; machine: string } | null => {
  const m = /(?:\.|^upload-)(\d+)@([0-9a-f]{8})-[0-9a-f]+\.part$/.exec(name);
  return m ? { pid: Number(m[1]), machine: m[2]! } : null;
};

/** Whether a process of this id runs on this machine. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether a part file was left by a copy that will never finish: its writer, a process of this machine, is gone,
 * or nobody has written to it for an hour. Another machine's process ids mean nothing here, so its part files (in a
 * shared media folder) are left while they are written to. Only part files named with a writer (see partTail) are
 * a copy's: the same folder holds paid results staged before a crash (`task-N-aX.ext.<hex>.part`), which the
 * engine finds again at its next start however old they are, so they are never touched here.
 */
export function isStalePart(name: string, ageMs: number, isAlive: (pid: number) => boolean = alive, everyPart = false): boolean {
  const writer = writerOf(name);
  if (writer === null) return everyPart && name.endsWith('.part') && ageMs > ABANDONED_MS;
  if (ageMs > ABANDONED_MS) return true;
  return writer.machine === MACHINE && writer.pid !== process.pid && !isAlive(writer.pid);
}

/**
 * Removes the part files in `dir` left by copies that will never finish (a crash or a kill mid-copy). `everyPart`:
 * the folder holds nothing but such copies (the uploads folder), so a part file with no writer in its name is one too.
 */
export async function sweepStaleParts(dir: string, everyPart = false, now = Date.now()): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names.filter((n) => n.endsWith('.part'))) {
    const info = await stat(join(dir, name)).catch(() => null);
    if (info?.isFile() && isStalePart(name, now - info.mtimeMs, alive, everyPart)) await rm(join(dir, name), { force: true });
  }
}
