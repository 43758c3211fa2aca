import type { LearnedDurations } from './durations.ts';
import { spanWords } from './eta.ts';

/** A model with neither a documented run time nor any learned here: the poll deadline's half hour. */
export const UNKNOWN_RUN_MS = 30 * 60_000;

/** When a listing that shows a request only once it has ended could show one sent at a given time, and why then. */
export interface ListedBy {
  at: number;
  why: string;
}

/** One run of a model at its longest, and how that was reached, in words. */
export interface LongestRun {
  ms: number;
  basis: string;
}

/**
 * The longer of twice the provider's stated run time (it gives a typical one) and the slowest run learned here
 * (which counts the queue as this machine met it), else UNKNOWN_RUN_MS.
 */
export function longestRun(provider: string, documentedRunMs: number | undefined, learned: LearnedDurations | null): LongestRun {
  const slowest = learned?.sorted.at(-1) ?? null;
  const stated = documentedRunMs === undefined ? null : 2 * documentedRunMs;
  if (stated === null && slowest === null) return { ms: UNKNOWN_RUN_MS, basis: `no run time of this model is known, so ${spanWords(UNKNOWN_RUN_MS)}` };
  if (stated !== null && stated >= (slowest ?? 0)) return { ms: stated, basis: `twice ${provider}'s stated run of about ${spanWords(documentedRunMs!)}` };
  return { ms: slowest!, basis: `the slowest of ${learned!.sorted.length} runs of this model here, ${spanWords(slowest!)}` };
}

/** A request of the same provider this studio sent before the one looked for, and had not seen end by then. */
export interface Ahead {
  sentAt: number;
  /** When the studio heard it had ended (no earlier than its end at the provider), or null while not heard. */
  endedAt: number | null;
  /** Still queued or running at the provider at the studio's last look (it is polled): it ends after now. */
  inFlight: boolean;
  /** Its longest life at the provider: its longest run, as many times as the provider may run it. */
  lifeMs: number;
}

/**
 * When a request sent at `sentAt` has surely started, given the requests ahead of it. fal runs an account's
 * requests some at a time across all its endpoints and queues the rest: "additional requests wait in the queue
 * and are dispatched as soon as a slot frees up. Requests are never rejected due to concurrency limits"
 * (docs.fal.ai/documentation/model-apis/concurrency-limits), and how many at a time is the account's (it rises
 * with credit bought) or a model's, which the studio cannot read. So it counts one at a time, in the order sent:
 * a request starts at the latest once every request sent before it that had not ended has ended. One heard to
 * have ended counts by then; one still in flight, not before now (so while any is, the request is not listed
 * yet); any other (its outcome unknown, or mid-send) by the same rule applied to it, plus its longest life.
 */
export function queuedBehind(sentAt: number, ahead: readonly Ahead[], now: number): number {
  let start = sentAt;
  for (const a of [...ahead].sort((x, y) => x.sentAt - y.sentAt)) {
    const end = a.endedAt ?? (a.inFlight ? Math.max(now, start + a.lifeMs) : start + a.lifeMs);
    start = Math.max(start, end);
  }
  return start;
}

/**
 * A request sent at `sentAt` has surely ended, and so is listed, once the requests ahead of it have ended
 * (queuedBehind), it has been run as many times as the provider may run it (`runs`), each at its longest, and
 * the queue allowance has passed.
 */
export function listedBy(
  provider: string,
  sentAt: number,
  run: LongestRun,
  queueMs: number,
  more: { runs: number; ahead: readonly Ahead[]; now: number },
): ListedBy {
  const start = queuedBehind(sentAt, more.ahead, more.now);
  const at = start + more.runs * run.ms + queueMs;
  const inFlight = more.ahead.filter((a) => a.inFlight).length;
  const behind =
    more.ahead.length === 0
      ? ''
      : `, after the ${more.ahead.length} request(s) to ${provider} sent before it that had not ended then` +
        (inFlight > 0 ? `, ${inFlight} of them still queued or running (later still if they are)` : '');
  const runs = more.runs > 1 ? `, up to ${more.runs} runs as ${provider} retries a failed one` : '';
  return {
    at,
    why:
      `${provider} lists a request once it has ended, and one sent then could still be queued or running until ` +
      `${new Date(at).toISOString()} (${run.basis}${runs}${behind}, plus ${spanWords(queueMs)} in the queue)`,
  };
}
