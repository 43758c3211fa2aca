import { backoffDelay, SUBMIT_BACKOFF } from './backoff.ts';

/**
 * How a submit failed, as the HTTP layer and the adapter can prove it:
 * - never_sent: nothing reached the provider (DNS, refused connection, nothing written);
 * - rejected: the provider answered with a definitive refusal (400/401/402/403/422, or an answer its adapter
 *   reads as out of credit or a locked account, a 429 among them): not applied, not charged, never sent again;
 * - rate_limited: 429, not applied;
 * - maybe_applied: the request left and no definitive answer came back (timeout, reset, 5xx).
 */
export type SubmitFailureKind = 'never_sent' | 'rejected' | 'rate_limited' | 'maybe_applied';

export interface SubmitFailure {
  kind: SubmitFailureKind;
  message: string;
  retryAfterMs?: number;
  /** The provider documents this failure as never billed (fal: 5xx), so it may go back to the queue. */
  neverBilled?: boolean;
}

export interface SubmitContext {
  /** Submits already started for this task, this one included. */
  attempts: number;
  maxAttempts: number;
  /** The provider honours an idempotency key, so the same key may be sent again. */
  idempotent: boolean;
  /** Times the same key was already resent in this attempt. */
  resends: number;
  /** An earlier send of this attempt may have been applied: no later answer can prove it was not. */
  mayHaveApplied?: boolean;
  random: number;
}

export type SubmitDecision =
  | { action: 'requeue'; delayMs: number; reason: string }
  | { action: 'resend'; reason: string }
  | { action: 'fail'; reason: string }
  | { action: 'unknown'; reason: string };

export const MAX_IDEMPOTENT_RESENDS = 2;

export function submitDecision(f: SubmitFailure, ctx: SubmitContext): SubmitDecision {
  const decision = decide(f, ctx);
  if (ctx.mayHaveApplied && decision.action !== 'resend' && decision.action !== 'unknown') {
    return {
      action: 'unknown',
      reason: `an earlier send of this request may have been applied, and the resend answered: ${f.message}`,
    };
  }
  return decision;
}

function decide(f: SubmitFailure, ctx: SubmitContext): SubmitDecision {
  const requeueOrFail = (why: string, minDelayMs = 0): SubmitDecision =>
    ctx.attempts >= ctx.maxAttempts
      ? { action: 'fail', reason: `${why}; gave up after ${ctx.attempts} attempts, nothing was charged` }
      : {
          action: 'requeue',
          delayMs: Math.max(minDelayMs, backoffDelay(SUBMIT_BACKOFF, ctx.attempts, ctx.random)),
          reason: `${why}; will try again`,
        };

  switch (f.kind) {
    case 'never_sent':
      return requeueOrFail(`the request never reached the provider (${f.message})`);
    case 'rate_limited':
      return requeueOrFail(`the provider is rate limiting (${f.message})`, f.retryAfterMs ?? 0);
    case 'rejected':
      return { action: 'fail', reason: f.message };
    case 'maybe_applied':
      if (f.neverBilled) return requeueOrFail(`the provider failed without charging (${f.message})`);
      if (ctx.idempotent && ctx.resends < MAX_IDEMPOTENT_RESENDS) {
        return { action: 'resend', reason: `no answer (${f.message}); resending with the same idempotency key` };
      }
      return {
        action: 'unknown',
        reason: `the request was sent but no definitive answer came back (${f.message}); the provider may have charged it`,
      };
  }
}
