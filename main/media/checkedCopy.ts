import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { partTail, sweepStaleParts } from './staleParts.ts';
import { dirname } from 'node:path';

/** The disk filled while a file was written: nothing of it was kept. The message says how much room it needs. */
export class DiskFull extends Error {}

/** The file changed while it was copied: the copy is not the file that was checked, so none was kept. */
export class ChangedWhileCopied extends Error {}

const megabytes = (bytes: number) => `${Math.max(1, Math.ceil(bytes / 1024 / 1024))} MB`;

/** Words for a disk too full to hold a file of `bytes`, as the studio says them when saving a result. */
export const diskFullWords = (what: string, bytes: number) => `the disk is full; free some space (${what} needs about ${megabytes(bytes)}) and try again`;

/**
 * Copies `from` to `to`, hashing what it copies: written beside `to` and renamed, so a half-copied file never bears
 * its name, and refused (ChangedWhileCopied) when what was copied does not have the checksum `sha256` that was
 * checked. Part files of copies that never finished (a kill mid-copy) are swept from the folder first.
 */
export async function copyChecked(from: string, to: string, sha256: string, bytes: number, what: string): Promise<void> {
  await sweepStaleParts(dirname(to));
  const part = `${to}.${partTail(randomBytes(4).toString('hex'))}`;
  const hash = createHash('sha256');
  try {
    await pipeline(
      createReadStream(from),
      async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          hash.update(chunk);
          yield chunk;
        }
      },
      createWriteStream(part),
    );
    if (hash.digest('hex') !== sha256) throw new ChangedWhileCopied(`${what} changed while it was being copied; wait until it is saved, then try again`);
    await rename(part, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOSPC') throw new DiskFull(diskFullWords(`the copy of ${what}`, bytes));
    throw err;
  } finally {
    await rm(part, { force: true });
  }
}
