/**
 * How long one model's requests have taken on this machine, from the provider's acceptance to the result:
 * learned from the tasks that succeeded, for deciding when to look (pollSchedule.ts) and for estimating when
 * a step will be ready. Pure: the samples come from TaskStore.recentDurations.
 */
export interface LearnedDurations {
  /** The durations learned from, in milliseconds, shortest first. */
  sorted: readonly number[];
  /** Quick ones (10th percentile): no look before this is likely to find it done. */
  fastMs: number;
  /** The median. */
  typicalMs: number;
  /** The slow tail (90th percentile): past it, looks back off. */
  slowMs: number;
}

/** Fewer samples than this say too little to plan on. */
export const MIN_SAMPLES = 3;

function quantile(sorted: readonly number[], q: number): number {
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return Math.round(sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (at - lo));
}

export function learnDurations(samplesMs: readonly number[]): LearnedDurations | null {
  const sorted = samplesMs.filter((d) => Number.isFinite(d) && d >= 0).sort((a, b) => a - b);
  if (sorted.length < MIN_SAMPLES) return null;
  return { sorted, fastMs: quantile(sorted, 0.1), typicalMs: quantile(sorted, 0.5), slowMs: quantile(sorted, 0.9) };
}

/**
 * How much longer a request that has run `elapsedMs` is likely to take: the median of the past durations that
 * were longer than that, less the time already run. Null when nothing learned ran this long (past the slowest
 * seen, there is no honest estimate).
 */
export function expectedRemainingMs(learned: LearnedDurations | null, elapsedMs: number): number | null {
  if (!learned) return null;
  const longer = learned.sorted.filter((d) => d > elapsedMs);
  if (longer.length === 0) return null;
  return quantile(longer, 0.5) - elapsedMs;
}
