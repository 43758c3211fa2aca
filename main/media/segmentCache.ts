import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sha256File } from './checksum.ts';

/** A segment unused this long, by any render, is removed after a render: it is only ever a copy of work redone. */
const UNUSED_MS = 7 * 24 * 3600 * 1000;

/**
 * The pieces a project's films are assembled from, each named by a key made of everything that shapes it (its
 * inputs' checksums, the frame, the frames it covers, its fades and burned cues), with its own checksum beside it.
 * A piece is reused only when its bytes still match that checksum, so a damaged or half-copied one is made again.
 */
export class SegmentCache {
  constructor(readonly dir: string) {}

  static key(shape: unknown): string {
    return createHash('sha256').update(JSON.stringify(shape)).digest('hex').slice(0, 32);
  }

  /** A piece of picture is MP4; the film's sound, kept the same way, is M4A. */
  path(key: string, ext = 'mp4'): string {
    return join(this.dir, `${key}.${ext}`);
  }

  /**
   * The piece if it is here whole (its checksum matches, and the checksum file names this key: a piece copied over
   * another with its checksum is not taken for it), marked as used now; null otherwise.
   */
  async whole(key: string, ext = 'mp4'): Promise<string | null> {
    const path = this.path(key, ext);
    const sumFile = join(this.dir, `${key}.sha256`);
    if (!existsSync(path) || !existsSync(sumFile)) return null;
    const [expected, actual] = await Promise.all([readFile(sumFile, 'utf8').catch(() => ''), sha256File(path).catch(() => '')]);
    if (expected.trim() !== `${actual} ${key}`) return null;
    const now = new Date();
    await utimes(path, now, now).catch(() => undefined);
    return path;
  }

  /** Where a piece is written before it is whole: named for its render, so a crash's leftovers are found. */
  part(key: string, owner: string, ext = 'mp4'): string {
    return join(this.dir, `${key}.${owner}.part.${ext}`);
  }

  /** A piece written whole: put in place, then its checksum beside it (a piece without one is not trusted). */
  async keep(key: string, part: string, ext = 'mp4'): Promise<string> {
    const sum = await sha256File(part);
    await rename(part, this.path(key, ext));
    await this.write(`${key}.sha256`, `${sum} ${key}`);
    return this.path(key, ext);
  }

  /** A small note beside the pieces, whole or not at all: written aside, then renamed into place. */
  async write(name: string, text: string): Promise<void> {
    const aside = join(this.dir, `${name}.${process.pid}-${Date.now()}.part`);
    try {
      await writeFile(aside, text);
      await rename(aside, join(this.dir, name));
    } finally {
      await rm(aside, { force: true });
    }
  }

  /** A note written with `write`, or null when it is missing or empty. */
  async read(name: string): Promise<string | null> {
    const text = (await readFile(join(this.dir, name), 'utf8').catch(() => '')).trim();
    return text === '' ? null : text;
  }

  /** Removes what a render of this owner left half-written. */
  async clearParts(owner: string): Promise<void> {
    if (!existsSync(this.dir)) return;
    for (const f of await readdir(this.dir)) if (f.includes(`.${owner}.part.`)) await rm(join(this.dir, f), { force: true });
  }

  /** Removes the pieces no render has used for a week, except those just used. */
  async prune(used: ReadonlySet<string>, now: number): Promise<void> {
    for (const f of await readdir(this.dir)) {
      const key = f.split('.')[0]!;
      if (used.has(key) || f.includes('.part.') || !/\.(mp4|m4a|sha256)$/.test(f)) continue;
      const path = join(this.dir, f);
      const { mtimeMs } = await stat(path).catch(() => ({ mtimeMs: now }));
      if (now - mtimeMs > UNUSED_MS) await rm(path, { force: true });
    }
  }
}
