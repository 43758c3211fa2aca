import type { LearnedDurations } from './durations.ts';
import { spanWords } from './eta.ts';

/**
 * How long a request may wait in a provider's queue before it runs. fal sets no limit of its own: its start
 * deadline, X-Fal-Request-Timeout, has "Default: No timeout" (docs.fal.ai/documentation/model-apis/common-parameters),
 * and requests over the account's concurrency wait in the queue. So this is the studio's allowance, a setting.
 */
export const DEFAULT_QUEUE_MS = 10 * 60_000;

/** A model with neither a documented run time nor any learned here: the poll deadline's half hour. */
export const UNKNOWN_RUN_MS = 30 * 60_000;

/** When a listing that shows a request only once it has ended could show one sent at a given time, and why then. */
export interface ListedBy {
  at: number;
  why: string;
}

/**
 * A request sent at `sentAt` has surely ended, and so is listed, once its longest run and its time in the queue
 * have passed: the longest run is the longer of twice the provider's stated run time (it gives a typical one) and
 * the slowest run learned here (which counts the queue as this machine met it), else UNKNOWN_RUN_MS.
 */
export function listedBy(provider: string, sentAt: number, documentedRunMs: number | undefined, learned: LearnedDurations | null, queueMs: number): ListedBy {
  const slowest = learned?.sorted.at(-1) ?? null;
  const stated = documentedRunMs === undefined ? null : 2 * documentedRunMs;
  const run = stated === null && slowest === null ? UNKNOWN_RUN_MS : Math.max(stated ?? 0, slowest ?? 0);
  const basis =
    stated === null && slowest === null
      ? `no run time of this model is known, so ${spanWords(UNKNOWN_RUN_MS)}`
      : stated !== null && stated >= (slowest ?? 0)
        ? `twice ${provider}'s stated run of about ${spanWords(documentedRunMs!)}`
        : `the slowest of ${learned!.sorted.length} runs of this model here, ${spanWords(slowest!)}`;
  const at = sentAt + run + queueMs;
  return {
    at,
    why:
      `${provider} lists a request once it has ended, and one sent then could still be queued or running until ` +
      `${new Date(at).toISOString()} (${basis}, plus ${spanWords(queueMs)} in the queue)`,
  };
}
