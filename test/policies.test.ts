import { describe, expect, it } from 'vitest';
import { backoffDelay, SUBMIT_BACKOFF } from '../main/domain/backoff.ts';
import { recoveryFor } from '../main/engine/recovery.ts';
import { SleepDetector } from '../main/engine/sleepDetector.ts';
import { submitDecision, type SubmitContext } from '../main/domain/submitOutcome.ts';

describe('recoveryFor', () => {
  it.each([
    ['SUBMITTED with a request id polls, even though submit_started_at is set', { status: 'SUBMITTED', remoteRequestId: 'r', submitStartedAt: 5 }, 'poll'],
    ['RUNNING never marked goes back to the queue', { status: 'RUNNING', remoteRequestId: null, submitStartedAt: null }, 'requeue'],
    ['RUNNING marked without an id is parked', { status: 'RUNNING', remoteRequestId: null, submitStartedAt: 5 }, 'park'],
    ['PENDING (fresh claim) starts from the top', { status: 'PENDING', remoteRequestId: null, submitStartedAt: null }, 'requeue'],
  ] as const)('%s', (_name, task, action) => {
    expect(recoveryFor(task).action).toBe(action);
  });

  it('parks as OUTCOME_UNKNOWN', () => {
    expect(recoveryFor({ status: 'RUNNING', remoteRequestId: null, submitStartedAt: 1 })).toEqual({
      action: 'park',
      status: 'OUTCOME_UNKNOWN',
    });
  });
});

describe('submitDecision', () => {
  const ctx: SubmitContext = { attempts: 1, maxAttempts: 5, idempotent: false, resends: 0, random: 0.5 };

  it.each([
    ['never sent', { kind: 'never_sent', message: 'ECONNREFUSED' }, ctx, 'requeue'],
    ['never sent on the last attempt', { kind: 'never_sent', message: 'x' }, { ...ctx, attempts: 5 }, 'fail'],
    ['rejected', { kind: 'rejected', message: 'HTTP 401' }, ctx, 'fail'],
    ['rate limited', { kind: 'rate_limited', message: '429' }, ctx, 'requeue'],
    ['maybe applied', { kind: 'maybe_applied', message: 'reset' }, ctx, 'unknown'],
    ['maybe applied, documented as never billed', { kind: 'maybe_applied', message: '503', neverBilled: true }, ctx, 'requeue'],
    ['maybe applied, idempotent provider', { kind: 'maybe_applied', message: 'reset' }, { ...ctx, idempotent: true }, 'resend'],
    ['maybe applied, idempotent, resends used up', { kind: 'maybe_applied', message: 'reset' }, { ...ctx, idempotent: true, resends: 2 }, 'unknown'],
  ] as const)('%s', (_name, failure, context, action) => {
    expect(submitDecision(failure, context).action).toBe(action);
  });

  it.each([
    ['never sent', { kind: 'never_sent', message: 'ECONNREFUSED' }],
    ['rejected', { kind: 'rejected', message: 'HTTP 409: key in use' }],
    ['rate limited', { kind: 'rate_limited', message: '429' }],
  ] as const)('after an earlier send that may have been applied, a resend answered %s is still unknown', (_n, failure) => {
    expect(submitDecision(failure, { ...ctx, idempotent: true, resends: 1, mayHaveApplied: true }).action).toBe('unknown');
  });

  it('waits at least Retry-After', () => {
    const d = submitDecision({ kind: 'rate_limited', message: '429', retryAfterMs: 120_000 }, ctx);
    expect(d).toMatchObject({ action: 'requeue' });
    expect((d as { delayMs: number }).delayMs).toBeGreaterThanOrEqual(120_000);
  });
});

describe('backoff', () => {
  it('grows, is capped, and jitters both ways', () => {
    expect(backoffDelay(SUBMIT_BACKOFF, 1, 0.5)).toBe(2_000);
    expect(backoffDelay(SUBMIT_BACKOFF, 3, 0.5)).toBe(8_000);
    expect(backoffDelay(SUBMIT_BACKOFF, 30, 0.5)).toBe(SUBMIT_BACKOFF.maxMs);
    expect(backoffDelay(SUBMIT_BACKOFF, 1, 0)).toBe(1_500);
    expect(backoffDelay(SUBMIT_BACKOFF, 1, 0.999)).toBeCloseTo(2_500, -1);
  });
});

describe('SleepDetector', () => {
  it('reports the time the wall clock ran ahead of the monotonic clock', () => {
    const d = new SleepDetector(2_000);
    expect(d.look(1_000, 100)).toBe(0);
    expect(d.look(2_000, 1_100)).toBe(0);
    expect(d.look(3_602_000, 2_100)).toBe(3_599_000);
    expect(d.look(3_603_000, 3_100)).toBe(0);
  });
});
