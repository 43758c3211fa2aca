/**
 * Which machine saved a file, as this machine judges it. The id a file was saved with tells two computers of one
 * name apart; a file saved before ids were recorded is judged by its name, and one saved before names were, is
 * taken for this machine's (nothing says otherwise).
 */
import type { MediaFolder } from './mediaFolder.ts';

/** What a row says of a saved file: where, and which machine saved it (null for files saved before that was kept). */
export interface SavedFile {
  path: string;
  machine: string | null;
  /** The id of the machine that saved it: absent or null for files saved before ids were recorded. */
  machineId?: string | null;
}

/** 'this': this machine saved it. 'other': another machine did (`sameName` when it goes by this machine's name). */
export type SavedBy = { by: 'this' } | { by: 'other'; sameName: boolean };

export function savedBy(file: SavedFile, here: Pick<MediaFolder, 'machine' | 'machineId'>): SavedBy {
  if (file.machineId && here.machineId) return file.machineId === here.machineId ? { by: 'this' } : { by: 'other', sameName: file.machine === here.machine };
  return file.machine === null || file.machine === here.machine ? { by: 'this' } : { by: 'other', sameName: false };
}

/** The machine that saved a file, in words: "machine 'vm'", with a word when it is another computer of this one's name. */
export function machineWords(file: SavedFile, saved: SavedBy): string {
  return saved.by === 'other' && saved.sameName ? `machine '${file.machine}' (another computer of that name)` : `machine '${file.machine}'`;
}
