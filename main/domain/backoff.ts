export interface BackoffPolicy {
  baseMs: number;
  factor: number;
  maxMs: number;
  /** Fraction of the delay that is randomised either way, so many tasks do not retry in step. */
  jitter: number;
}

export const SUBMIT_BACKOFF: BackoffPolicy = { baseMs: 2_000, factor: 2, maxMs: 5 * 60_000, jitter: 0.25 };

/** Delay before try number `attempt` (1-based); `random` is in [0, 1). */
export function backoffDelay(policy: BackoffPolicy, attempt: number, random: number): number {
  const raw = Math.min(policy.maxMs, policy.baseMs * policy.factor ** Math.max(0, attempt - 1));
  return Math.round(raw * (1 - policy.jitter + 2 * policy.jitter * random));
}
