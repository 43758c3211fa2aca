import { StoryboardError } from './storyboard.ts';

/**
 * Every save of a storyboard names the revision it was made from; revision 0 is "no storyboard yet". A save made
 * from an older revision than the stored one would silently undo what another editor saved, so it is refused.
 */
export class StaleStoryboard extends Error {
  constructor(
    readonly project: string | number,
    readonly from: number,
    readonly current: number,
  ) {
    const of = typeof project === 'string' ? `"${project}"` : `project ${project}`;
    super(
      current === 0
        ? `there is no saved storyboard of ${of} for this save made from revision ${from} to replace; save it as a new one (revision 0)`
        : from === 0
        ? `the storyboard of ${of} was saved by someone else (it is at revision ${current}) and this save does not say which revision it was made from; open the storyboard again, or save with revision ${current} to replace it knowingly`
        : `the storyboard of ${of} was saved by someone else since revision ${from} (it is at revision ${current} now); open it again and redo your change, or save with revision ${current} to replace it knowingly`,
    );
  }
}

/** A storyboard as sent to be saved, with the revision it was made from taken off (0 when it names none). */
export function splitRevision(value: unknown): { from: number; board: unknown } {
  if (!value || typeof value !== 'object' || Array.isArray(value) || !('revision' in value)) return { from: 0, board: value };
  const { revision, ...board } = value as Record<string, unknown>;
  if (revision === null || revision === undefined) return { from: 0, board };
  if (typeof revision !== 'number' || !Number.isSafeInteger(revision) || revision < 0) {
    throw new StoryboardError(`revision: is the whole number of the saved storyboard this one was made from (0 for a new one), not ${JSON.stringify(revision)}`);
  }
  return { from: revision, board };
}
