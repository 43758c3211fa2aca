import { stat } from 'node:fs/promises';
import { sha256File } from './checksum.ts';

export type FileState = 'here' | 'missing' | 'changed';

/** Remembered verdicts at most: a long-running host forgets them all and reads again past this. */
const REMEMBERED = 10_000;

/**
 * Whether a saved file is here and is the file that was saved. Its size is compared always; with `deep`, its
 * checksum too, read once per version of the file (its size and modification time), so a video a page seeks in
 * many times is read whole once.
 */
export class FileChecks {
  private readonly whole = new Map<string, boolean>();

  async state(path: string, saved: { sha256: string; bytes: number | null }, deep: boolean): Promise<FileState> {
    let info;
    try {
      info = await stat(path);
    } catch {
      return 'missing';
    }
    if (!info.isFile()) return 'missing';
    if (saved.bytes !== null && info.size !== saved.bytes) return 'changed';
    if (!deep) return 'here';
    const key = `${path}\u0000${info.size}\u0000${info.mtimeMs}\u0000${saved.sha256}`;
    let same = this.whole.get(key);
    if (same === undefined) {
      let sum: string;
      try {
        sum = await sha256File(path);
      } catch {
        return 'missing';
      }
      same = sum === saved.sha256;
      if (this.whole.size >= REMEMBERED) this.whole.clear();
      this.whole.set(key, same);
    }
    return same ? 'here' : 'changed';
  }
}
