import type { MediaFolder } from './mediaFolder.ts';
import { isAbsoluteAnywhere } from './mediaFolder.ts';
import { machineWords, savedBy, type SavedFile } from './savedBy.ts';

export const SHARE_ADVICE = 'share the media folder (Settings → Media folder, or --media)';

/** "looked for at A", "looked for at A and at B": each place a file was looked for on this machine. */
export function lookedFor(places: readonly string[]): string {
  const at = places.map((p) => `at ${p}`);
  return `looked for ${at.length > 1 ? `${at.slice(0, -1).join(', ')} and ${at.at(-1)}` : (at[0] ?? 'nowhere')}`;
}

/**
 * Why a saved file cannot be read here, in words for the person: which machine saved it and where, and what to do.
 * `subject` names the file the way the person knows it ("scene 2's clip", "task 12's result").
 */
export function notHereWords(subject: string, file: SavedFile, state: 'missing' | 'changed', here: Pick<MediaFolder, 'root' | 'machine' | 'machineId' | 'resolve' | 'places'>): string {
  const where = here.resolve(file.path);
  const saved = savedBy(file, here);
  const elsewhere = saved.by === 'other';
  const mine = file.machine !== null && !elsewhere;
  if (state === 'changed') {
    const who = file.machine === null ? 'the studio' : mine ? 'this machine' : machineWords(file, saved);
    return `${subject} at ${where} is not the file ${who} saved: its checksum differs, so it was changed or damaged since it was saved`;
  }
  if (isAbsoluteAnywhere(file.path)) {
    return elsewhere
      ? `${subject} was saved on ${machineWords(file, saved)} at ${file.path}, outside a shared media folder; it is not on this machine`
      : `${subject} is no longer at ${file.path}: it was moved or deleted (${lookedFor(here.places(file.path))})`;
  }
  if (mine) {
    return `${subject} was saved on this machine ('${here.machine}') at ${file.path} in the media folder ${here.root}, and is no longer there: it was moved or deleted (${lookedFor(here.places(file.path))})`;
  }
  const by = elsewhere ? ` on ${machineWords(file, saved)}` : '';
  return `${subject} was saved${by} at ${file.path}; it is not in this machine's media folder ${here.root}: ${SHARE_ADVICE}`;
}
