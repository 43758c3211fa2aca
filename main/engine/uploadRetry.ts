import type { TaskEvent } from '../domain/tasks/model.ts';
import { backoffDelay, SUBMIT_BACKOFF } from '../domain/backoff.ts';
import type { UploadFailed } from './inputUploads.ts';

/** Uploads tried in all before the task fails: about half a minute of backoff for a storage outage to pass. */
export const UPLOAD_TRIES = 5;

/** Marks the requeue of an upload that failed, so the failures are counted from the task's history. */
export const UPLOAD_FAILED_DETAIL = { uploadFailed: true } as const;

/**
 * Upload failures since a person last acted on the task. Nothing is marked before an upload, so the task's attempt
 * count never grows with them; they are counted here instead.
 */
export function uploadFailures(events: readonly TaskEvent[]): number {
  let n = 0;
  for (const e of events) {
    if (e.actor === 'person') n = 0;
    else if ((e.detail as { uploadFailed?: unknown } | null)?.uploadFailed === true) n++;
  }
  return n;
}

export type UploadRetry = { action: 'requeue'; delayMs: number } | { action: 'fail'; reason: string };

/** What becomes of a task whose input file was not taken, `earlier` failures before this one; nothing was sent. */
export function uploadRetry(failure: UploadFailed, earlier: number, random: number): UploadRetry {
  const { file, provider, problem } = failure;
  if (failure.lasting) {
    return { action: 'fail', reason: `${provider}'s storage refused ${file}: ${problem}. Nothing was sent or charged; generate again once that is fixed` };
  }
  const tries = earlier + 1;
  if (tries >= UPLOAD_TRIES) {
    return {
      action: 'fail',
      reason: `${provider}'s storage did not take ${file} in ${tries} tries (last: ${problem}). Nothing was sent or charged; generate again later`,
    };
  }
  return { action: 'requeue', delayMs: backoffDelay(SUBMIT_BACKOFF, tries, random) };
}
