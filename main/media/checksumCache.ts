import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { sha256File } from './checksum.ts';

/** Checksums remembered at most: a long-running host forgets them all and reads again past this. */
const REMEMBERED = 10_000;

/**
 * The SHA-256 of a file, read once per version of it: a version is its path, size and modification time, so an
 * estimate run again and again does not read a clip of a gigabyte again and again, and a file written since (its
 * size or time changed) is read anew. A file rewritten to the same size with its modification time put back is
 * not noticed: that is the price of not reading it.
 */
export class ChecksumCache {
  private readonly sums = new Map<string, string>();
  /** How many times a file was read whole. */
  reads = 0;

  constructor(private readonly hash: (path: string) => Promise<string> = sha256File) {}

  async of(path: string): Promise<string> {
    const full = resolve(path);
    const before = await stat(full);
    const key = `${full}\u0000${before.size}\u0000${before.mtimeMs}`;
    const known = this.sums.get(key);
    if (known) return known;
    this.reads++;
    const sum = await this.hash(full);
    // Written to while it was read: the sum may be of neither version, so it is not remembered.
    const after = await stat(full);
    if (after.size !== before.size || after.mtimeMs !== before.mtimeMs) return sum;
    if (this.sums.size >= REMEMBERED) this.sums.clear();
    this.sums.set(key, sum);
    return sum;
  }
}
