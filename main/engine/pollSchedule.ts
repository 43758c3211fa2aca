import type { LearnedDurations } from './durations.ts';

export interface PollScheduleInput {
  /** Since the provider accepted the request. */
  elapsedMs: number;
  /** This model's past durations on this machine, or null while too few are known. */
  learned: LearnedDurations | null;
  /** The wait before the previous look (0 before the first). */
  previousMs: number;
  /** The first wait when nothing is learned, growing by half each look (the configured poll interval). */
  firstMs: number;
  /** The shortest gap between two looks at one request. */
  minMs: number;
  /** The longest gap, whatever was learned. */
  maxMs: number;
  /** What the provider asked for with Retry-After, if anything. */
  retryAfterMs?: number;
}

/** Looks between the quick and the slow tail of past durations come this many to the spread. */
const LOOKS_IN_WINDOW = 8;
/** Past the slow tail the gap grows by this fraction of the time overdue. */
const BACKOFF_SHARE = 0.25;

/**
 * How long to wait before the next look at a request. With learned durations: the first look near the
 * quickest past ones, closer looks while the typical ones end, then backing off past the slow tail. Without:
 * the configured interval growing by half each time. Never under the minimum gap, never under what the
 * provider asked for with Retry-After, and never over the maximum gap unless the provider asked for more.
 */
export function nextPollDelay(p: PollScheduleInput): number {
  const clamp = (ms: number) => Math.max(p.minMs, Math.min(p.maxMs, ms));
  let wait: number;
  if (!p.learned) {
    wait = clamp(p.previousMs > 0 ? p.previousMs * 1.5 : p.firstMs);
  } else {
    const { fastMs, slowMs } = p.learned;
    const fine = clamp((slowMs - fastMs) / LOOKS_IN_WINDOW);
    // Wall time that went back (a clock set back, a submit stamped by a machine whose clock runs ahead) never
    // puts the first look past the quick durations.
    const elapsedMs = Math.max(0, p.elapsedMs);
    if (elapsedMs < fastMs) wait = Math.max(p.minMs, fastMs - elapsedMs);
    else if (elapsedMs <= slowMs) wait = fine;
    else wait = clamp(Math.max(fine, (elapsedMs - slowMs) * BACKOFF_SHARE));
  }
  return Math.round(Math.max(wait, p.retryAfterMs ?? 0));
}
