import { describe, expect, it } from 'vitest';
import { resolveUnknown } from '../main/engine/decisions.ts';
import { recoverExpired } from '../main/engine/recoverySweep.ts';
import { sweepOf } from './helpers/recording.ts';
import { imageTask, ManualClock, openTestDb } from './helpers/engine.ts';
import { tempDir } from './helpers/tmp.ts';

const LEASE = 10_000;

function setup() {
  const { db, repo, projectId } = openTestDb(tempDir());
  const clock = new ManualClock();
  const as = (owner: string) => ({ owner, now: clock.now() });
  return { db, repo, projectId, clock, as };
}

describe('claim', () => {
  it('keeps a reclaimed SUBMITTED row SUBMITTED, with its request id', () => {
    const { repo, projectId, clock, as } = setup();
    const { id } = repo.enqueue(imageTask(projectId), clock.now());
    repo.claim('image', 4, LEASE, as('a'));
    repo.markSubmitStarted(id, 'k', LEASE, as('a'));
    repo.recordSubmitted(id, { requestId: 'req-9', handle: null }, null, as('a'));
    clock.advance(LEASE + 1);
    const [row] = repo.claim('image', 4, LEASE, as('b'));
    expect(row).toMatchObject({ id, status: 'SUBMITTED', remoteRequestId: 'req-9', leaseOwner: 'b' });
  });

  it('does not take a row whose lease is still live, nor its own expired rows', () => {
    const { repo, projectId, clock, as } = setup();
    repo.enqueue(imageTask(projectId), clock.now());
    expect(repo.claim('image', 4, LEASE, as('a'))).toHaveLength(1);
    expect(repo.claim('image', 4, LEASE, as('b'))).toHaveLength(0);
    clock.advance(LEASE + 1);
    expect(repo.claim('image', 4, LEASE, as('a'))).toHaveLength(0);
    expect(repo.claim('image', 4, LEASE, as('b'), false)).toHaveLength(0);
    expect(repo.claim('image', 4, LEASE, as('b'))).toHaveLength(1);
  });

  it('limits each kind to its concurrency across all owners', () => {
    const { repo, projectId, clock, as } = setup();
    for (let i = 0; i < 6; i++) repo.enqueue(imageTask(projectId, `p${i}`), clock.now());
    repo.enqueue({ ...imageTask(projectId), kind: 'speech', input: { text: 'hi' } }, clock.now());
    expect(repo.claim('image', 4, LEASE, as('a'))).toHaveLength(4);
    expect(repo.claim('image', 4, LEASE, as('b'))).toHaveLength(0);
    expect(repo.claim('speech', 2, LEASE, as('b'))).toHaveLength(1);
  });

  it('holds back a task until everything it depends on succeeded, and cancels it if one fails', () => {
    const { repo, projectId, clock, as } = setup();
    const image = repo.enqueue(imageTask(projectId), clock.now());
    const clip = repo.enqueue({ ...imageTask(projectId), kind: 'clip', dependsOn: [image.id] }, clock.now());
    expect(repo.claim('clip', 3, LEASE, as('a'))).toHaveLength(0);
    repo.claim('image', 4, LEASE, as('a'));
    repo.fail(image.id, 'HTTP 422', 'no', as('a'));
    expect(repo.get(clip.id)).toMatchObject({ status: 'CANCELLED' });
    expect(repo.hasOutstandingWork()).toBe(false);
  });

  it('uses the partial indexes, not a scan of finished rows', () => {
    const { db } = setup();
    const plan = db
      .prepare(`EXPLAIN QUERY PLAN SELECT id FROM tasks WHERE kind = 'image' AND status = 'PENDING' ORDER BY created_at, id LIMIT 4`)
      .all()
      .map((r) => (r as { detail: string }).detail)
      .join('\n');
    expect(plan).toContain('tasks_claim_pending');
  });
});

describe('fenced writes', () => {
  it('refuses every executor write from an owner that lost the row', () => {
    const { repo, projectId, clock, as } = setup();
    const { id } = repo.enqueue(imageTask(projectId), clock.now());
    repo.claim('image', 4, LEASE, as('a'));
    clock.advance(LEASE + 1);
    recoverExpired(sweepOf(repo), clock.now(), new Set(), () => undefined);
    repo.claim('image', 4, LEASE, as('b'));
    expect(repo.markSubmitStarted(id, 'k', LEASE, as('a'))).toBeUndefined();
    expect(repo.markSubmitStarted(id, 'k', LEASE, as('b'))).toBeDefined();
    expect(repo.recordSubmitted(id, { requestId: 'r', handle: null }, null, as('a'))).toBeUndefined();
    expect(repo.renewLeases([id], LEASE, as('a'))).toEqual(new Set());
    expect(repo.renewLeases([id], LEASE, as('b'))).toEqual(new Set([id]));
  });

  it('lets an owner that was only asleep renew its expired lease, as long as nobody took it', () => {
    const { repo, projectId, clock, as } = setup();
    const { id } = repo.enqueue(imageTask(projectId), clock.now());
    repo.claim('image', 4, LEASE, as('a'));
    clock.advance(LEASE * 100);
    expect(repo.renewLeases([id], LEASE, as('a'))).toEqual(new Set([id]));
    expect(repo.get(id)!.leaseExpiresAt).toBe(clock.now() + LEASE);
  });
});

describe('recovery sweep', () => {
  it('requeues an unmarked row, parks a marked one, leaves a submitted one to be polled', () => {
    const { repo, projectId, clock, as } = setup();
    const fresh = repo.enqueue(imageTask(projectId, 'a'), clock.now());
    const marked = repo.enqueue(imageTask(projectId, 'b'), clock.now());
    const submitted = repo.enqueue(imageTask(projectId, 'c'), clock.now());
    repo.claim('image', 4, LEASE, as('dead'));
    repo.markSubmitStarted(marked.id, 'k1', LEASE, as('dead'));
    repo.markSubmitStarted(submitted.id, 'k2', LEASE, as('dead'));
    repo.recordSubmitted(submitted.id, { requestId: 'req', handle: null }, null, as('dead'));
    clock.advance(LEASE + 1);
    recoverExpired(sweepOf(repo), clock.now(), new Set(), () => undefined);
    expect(repo.get(fresh.id)).toMatchObject({ status: 'PENDING', leaseOwner: null });
    expect(repo.get(marked.id)).toMatchObject({ status: 'OUTCOME_UNKNOWN', charged: 'maybe' });
    expect(repo.get(marked.id)!.unknownReason).toContain('may have accepted');
    expect(repo.get(submitted.id)).toMatchObject({ status: 'SUBMITTED', remoteRequestId: 'req' });
  });

  it('does not recover a row whose owner renewed after the sweep looked', () => {
    const { repo, projectId, clock, as } = setup();
    const { id } = repo.enqueue(imageTask(projectId), clock.now());
    repo.claim('image', 4, LEASE, as('a'));
    clock.advance(LEASE + 1);
    const [seen] = repo.expiredLeases(clock.now());
    repo.renewLeases([id], LEASE, as('a'));
    expect(repo.recoverRequeue(seen!, clock.now(), 'late')).toBeUndefined();
    expect(repo.get(id)).toMatchObject({ status: 'RUNNING', leaseOwner: 'a' });
  });

  it('never parks a row whose request id was recorded after the sweep looked', () => {
    const { repo, projectId, clock, as } = setup();
    const { id } = repo.enqueue(imageTask(projectId), clock.now());
    repo.claim('image', 4, LEASE, as('a'));
    repo.markSubmitStarted(id, 'k', LEASE, as('a'));
    clock.advance(LEASE + 1);
    const [seen] = repo.expiredLeases(clock.now());
    repo.recordSubmitted(id, { requestId: 'req', handle: null }, null, as('a'));
    expect(repo.recoverPark(seen!, clock.now(), 'late')).toBeUndefined();
    expect(repo.get(id)).toMatchObject({ status: 'SUBMITTED', remoteRequestId: 'req', charged: 'yes' });
  });

  it('releases a submitted row its executor left, so the same process polls it again', () => {
    const { repo, projectId, clock, as } = setup();
    const { id } = repo.enqueue(imageTask(projectId), clock.now());
    repo.claim('image', 4, LEASE, as('a'));
    repo.markSubmitStarted(id, 'k', LEASE, as('a'));
    repo.recordSubmitted(id, { requestId: 'req', handle: null }, null, as('a'));
    repo.expireLease(id, as('a'));
    expect(repo.get(id)).toMatchObject({ status: 'SUBMITTED', leaseOwner: null });
    expect(repo.claim('image', 4, LEASE, as('a'))).toHaveLength(1);
  });

  it('holds a row released to retry later until its time comes', () => {
    const { repo, projectId, clock, as } = setup();
    const { id } = repo.enqueue(imageTask(projectId), clock.now());
    repo.claim('image', 4, LEASE, as('a'));
    repo.markSubmitStarted(id, 'k', LEASE, as('a'));
    repo.recordSubmitted(id, { requestId: 'req', handle: null }, null, as('a'));
    expect(repo.retryLater(id, clock.now() + 60_000, 'disk full', as('a'))).toBe(true);
    expect(repo.claim('image', 4, LEASE, as('b'))).toHaveLength(0);
    clock.advance(60_001);
    expect(repo.claim('image', 4, LEASE, as('b'))[0]).toMatchObject({ status: 'SUBMITTED', note: 'disk full' });
    expect(repo.events(id).map((e) => e.reason)).toContain('disk full');
  });

  it('recovers the rows of a dead owner at once, before its lease runs out', () => {
    const { repo, projectId, clock, as } = setup();
    const { id } = repo.enqueue(imageTask(projectId), clock.now());
    repo.claim('image', 4, LEASE, as('dead'));
    repo.expireLeasesOf(['dead'], clock.now());
    recoverExpired(sweepOf(repo), clock.now(), new Set(), () => undefined);
    expect(repo.get(id)).toMatchObject({ status: 'PENDING' });
  });
});

describe('task events', () => {
  it('logs every transition with who made it, and refuses edits', () => {
    const { db, repo, projectId, clock, as } = setup();
    const { id } = repo.enqueue(imageTask(projectId), clock.now());
    repo.claim('image', 4, LEASE, as('a'));
    repo.markSubmitStarted(id, 'k', LEASE, as('a'));
    repo.parkUnknown(id, 'socket hang up', as('a'));
    resolveUnknown(repo, id, { giveUp: true }, clock.now());
    expect(repo.events(id).map((e) => [e.fromStatus, e.toStatus, e.actor])).toEqual([
      [null, 'PENDING', 'person'],
      ['PENDING', 'RUNNING', 'engine'],
      ['RUNNING', 'RUNNING', 'engine'],
      ['RUNNING', 'OUTCOME_UNKNOWN', 'engine'],
      ['OUTCOME_UNKNOWN', 'FAILED', 'person'],
    ]);
    expect(() => db.prepare(`UPDATE task_events SET reason = 'x'`).run()).toThrow(/append-only/);
    expect(() => db.prepare(`DELETE FROM task_events`).run()).toThrow(/append-only/);
  });
});

describe("a person's decisions and spend", () => {
  function unknownTask() {
    const s = setup();
    const { id } = s.repo.enqueue(imageTask(s.projectId), s.clock.now());
    s.repo.claim('image', 4, LEASE, s.as('a'));
    s.repo.setEstimate(id, 40_000, 'catalogue', 'USD', s.as('a'));
    s.repo.markSubmitStarted(id, 'k', LEASE, s.as('a'));
    s.repo.parkUnknown(id, 'reset', s.as('a'));
    return { ...s, id };
  }

  it('counts an unknown outcome as possibly charged', () => {
    const { repo } = unknownTask();
    expect(repo.spend()[0]).toMatchObject({ actual: 0, estimated: 0, possiblyCharged: 40_000 });
  });

  it('adopt: SUBMITTED with the request id, ready to be polled', () => {
    const { repo, id, clock, as } = unknownTask();
    clock.advance(5_000);
    resolveUnknown(repo, id, { adopt: 'req-found' }, clock.now());
    // The poll deadline counts from the adoption, not from the lost send.
    expect(repo.get(id)).toMatchObject({ status: 'SUBMITTED', remoteRequestId: 'req-found', charged: 'yes', leaseOwner: null, submittedAt: clock.now() });
    expect(repo.claim('image', 4, LEASE, as('b'))[0]).toMatchObject({ status: 'SUBMITTED' });
    expect(repo.spend()[0]).toMatchObject({ estimated: 40_000, possiblyCharged: 0 });
  });

  it('resubmit: queued again, the first attempt still counted as possibly charged', () => {
    const { repo, id, clock } = unknownTask();
    resolveUnknown(repo, id, { resubmit: true }, clock.now());
    expect(repo.get(id)).toMatchObject({ status: 'PENDING', submitStartedAt: null, costAbandoned: 40_000 });
    expect(repo.spend()[0]!.possiblyCharged).toBe(40_000);
    expect(repo.events(id).at(-1)!.reason).toContain('may also have been charged');
  });

  it('give up: FAILED, still possibly charged', () => {
    const { repo, id, clock } = unknownTask();
    resolveUnknown(repo, id, { giveUp: true }, clock.now());
    expect(repo.get(id)).toMatchObject({ status: 'FAILED', charged: 'maybe' });
    expect(repo.spend()[0]!.possiblyCharged).toBe(40_000);
  });

  it('refuses a decision on a task whose outcome is known', () => {
    const { repo, projectId, clock } = setup();
    const { id } = repo.enqueue(imageTask(projectId), clock.now());
    expect(() => resolveUnknown(repo, id, { giveUp: true }, clock.now())).toThrow(/only a task whose outcome is unknown/);
    expect(repo.get(id)!.status).toBe('PENDING');
  });

  it('cancel: a pending task at once; a submitted one stays possibly charged', () => {
    const { repo, projectId, clock, as } = setup();
    const submitted = repo.enqueue(imageTask(projectId, 'b'), clock.now());
    repo.claim('image', 1, LEASE, as('a'));
    const pending = repo.enqueue(imageTask(projectId, 'a'), clock.now());
    repo.markSubmitStarted(submitted.id, 'k', LEASE, as('a'));
    repo.recordSubmitted(submitted.id, { requestId: 'r', handle: null }, { cost: 10_000, source: 'quote' }, as('a'));
    expect(repo.cancel(pending.id, clock.now())).toMatchObject({ status: 'CANCELLED', charged: 'no' });
    expect(repo.cancel(submitted.id, clock.now())).toMatchObject({ status: 'CANCELLED', charged: 'maybe', leaseOwner: null });
    expect(repo.spend()[0]!.possiblyCharged).toBe(10_000);
  });
});

describe('receipts of request ids', () => {
  const receipt = (taskId: number, idempotencyKey: string, requestId = 'req-r') => ({ taskId, idempotencyKey, requestId, handle: null, at: 1 });

  it('a journaled id makes a parked row SUBMITTED again, for the attempt it belongs to only', () => {
    const { repo, projectId, clock, as } = setup();
    const { id } = repo.enqueue(imageTask(projectId), clock.now());
    repo.claim('image', 4, LEASE, as('a'));
    repo.markSubmitStarted(id, 'k1', LEASE, as('a'));
    clock.advance(LEASE + 1);
    recoverExpired(sweepOf(repo), clock.now(), new Set(), () => undefined);
    expect(repo.get(id)!.status).toBe('OUTCOME_UNKNOWN');

    expect(repo.applyReceipt(receipt(id, 'k0'), true, clock.now())).toBeUndefined();
    expect(repo.receiptSettled(receipt(id, 'k0'))).toBe(true);
    expect(repo.receiptSettled(receipt(id, 'k1'))).toBe(false);
    expect(repo.applyReceipt(receipt(id, 'k1'), true, clock.now())).toMatchObject({ status: 'SUBMITTED', remoteRequestId: 'req-r', charged: 'yes', unknownReason: null });
    expect(repo.receiptSettled(receipt(id, 'k1'))).toBe(true);
    expect(repo.events(id).at(-1)).toMatchObject({ fromStatus: 'OUTCOME_UNKNOWN', toStatus: 'SUBMITTED', reason: 'recorded the request id kept in the receipt journal' });
  });

  it('a receipt of an attempt a person resubmitted is never applied; a cancelled row keeps its status and gets the id', () => {
    const { repo, projectId, clock, as } = setup();
    const resubmitted = repo.enqueue(imageTask(projectId, 'a'), clock.now());
    const cancelled = repo.enqueue(imageTask(projectId, 'b'), clock.now());
    repo.claim('image', 4, LEASE, as('a'));
    repo.markSubmitStarted(resubmitted.id, 'k1', LEASE, as('a'));
    repo.parkUnknown(resubmitted.id, 'lost', as('a'));
    resolveUnknown(repo, resubmitted.id, { resubmit: true }, clock.now());
    expect(repo.applyReceipt(receipt(resubmitted.id, 'k1'), true, clock.now())).toBeUndefined();
    expect(repo.get(resubmitted.id)).toMatchObject({ status: 'PENDING', remoteRequestId: null });

    repo.markSubmitStarted(cancelled.id, 'k2', LEASE, as('a'));
    repo.cancel(cancelled.id, clock.now());
    expect(repo.applyReceipt(receipt(cancelled.id, 'k2'), true, clock.now())).toMatchObject({ status: 'CANCELLED', charged: 'maybe', remoteRequestId: 'req-r' });
  });

  it('the sweep records a dead worker\'s journaled id instead of parking the row, and leaves a saved result to be completed', () => {
    const { repo, projectId, clock, as } = setup();
    const named = repo.enqueue(imageTask(projectId, 'a'), clock.now());
    const saved = repo.enqueue(imageTask(projectId, 'b'), clock.now());
    repo.claim('image', 4, LEASE, as('a'));
    repo.markSubmitStarted(named.id, 'k1', LEASE, as('a'));
    repo.markSubmitStarted(saved.id, 'k2', LEASE, as('a'));
    clock.advance(LEASE + 1);
    const ports = sweepOf(repo);
    ports.receipts.append(receipt(named.id, 'k1'));
    ports.hasResult = (t) => t.id === saved.id;
    recoverExpired(ports, clock.now(), new Set(), () => undefined);
    expect(repo.get(named.id)).toMatchObject({ status: 'SUBMITTED', remoteRequestId: 'req-r' });
    expect(repo.get(saved.id)).toMatchObject({ status: 'RUNNING', leaseOwner: 'a' });
  });
});

describe('history', () => {
  it('records a release, a dead owner\'s recovery and a later retry, each with its reason', () => {
    const { repo, projectId, clock, as } = setup();
    const { id } = repo.enqueue(imageTask(projectId), clock.now());
    repo.claim('image', 4, LEASE, as('a'));
    repo.markSubmitStarted(id, 'k', LEASE, as('a'));
    repo.recordSubmitted(id, { requestId: 'r', handle: null }, null, as('a'));
    expect(repo.expireLeasesOf(['a'], clock.now())).toBe(1);
    repo.claim('image', 4, LEASE, as('b'));
    repo.expireLease(id, as('b'));
    repo.claim('image', 4, LEASE, as('c'));
    repo.retryLater(id, clock.now() + 60_000, 'still running at the provider after 31 min', as('c'));
    expect(repo.events(id).map((e) => e.reason).slice(-5)).toEqual([
      'its worker process is gone; recovering it now',
      'reclaimed to poll its saved request',
      'released: its worker stopped before finishing it',
      'reclaimed to poll its saved request',
      'still running at the provider after 31 min',
    ]);
  });
});

describe('a saved result of an attempt that the row moved on from', () => {
  it('completes the task when it was parked, cancelled or given up meanwhile, never when a person chose a new attempt', () => {
    const { repo, projectId, clock, as } = setup();
    const out = { outputs: [{ path: '/m/a.png', sha256: 'f'.repeat(64), bytes: 1, contentType: 'image/png' }], costActual: null, requestId: 'req' };
    const ids = ['parked', 'cancelled', 'given up', 'resubmitted'].map((p) => repo.enqueue(imageTask(projectId, p), clock.now()).id);
    repo.claim('image', 4, LEASE, as('a'));
    ids.forEach((id) => repo.markSubmitStarted(id, `k${id}`, LEASE, as('a')));
    const [parked, cancelled, givenUp, resubmitted] = ids as [number, number, number, number];
    repo.parkUnknown(parked, 'lost', as('a'));
    repo.cancel(cancelled, clock.now());
    repo.parkUnknown(givenUp, 'lost', as('a'));
    resolveUnknown(repo, givenUp, { giveUp: true }, clock.now());
    repo.parkUnknown(resubmitted, 'lost', as('a'));
    resolveUnknown(repo, resubmitted, { resubmit: true }, clock.now());
    for (const id of [parked, cancelled, givenUp]) {
      expect(repo.completeAttempt(id, `k${id}`, out, clock.now())).toMatchObject({ status: 'SUCCEEDED', charged: 'yes', outputPath: '/m/a.png' });
    }
    expect(repo.completeAttempt(resubmitted, `k${resubmitted}`, out, clock.now())).toBeUndefined();
    expect(repo.get(resubmitted)!.status).toBe('PENDING');
  });
});
