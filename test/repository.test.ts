import { describe, expect, it as base } from 'vitest';
import { resolveUnknown } from '../main/engine/decisions.ts';
import { recoverExpired } from '../main/engine/recoverySweep.ts';
import { sweepOf } from './helpers/recording.ts';
import type { Store } from '../main/store/port.ts';
import { imageTask, openTestStore } from './helpers/engine.ts';
import { sqlOf } from './helpers/sql.ts';
import { receiptOf } from './helpers/receipts.ts';
import { openUnderTest } from './helpers/storeUnderTest.ts';
import { storeKinds } from './helpers/stores.ts';
import { tempDir } from './helpers/tmp.ts';

const LEASE = 10_000;

describe('the SQLite task table', () => {
  base('claims along the partial indexes, not a scan of finished rows', async () => {
    const dir = tempDir();
    await openTestStore(dir);
    const plan = sqlOf(dir)
      .prepare(`EXPLAIN QUERY PLAN SELECT id FROM tasks WHERE kind = 'image' AND status = 'PENDING' ORDER BY created_at, id LIMIT 4`)
      .all()
      .map((r) => (r as { detail: string }).detail)
      .join('\n');
    expect(plan).toContain('tasks_claim_pending');
  });
});

describe.each(storeKinds())('the $kind task store', (kind) => {
  const setup = () => openUnderTest(kind);
  const it = base.skipIf(!kind.available);

  describe('claim', () => {
    it('keeps a reclaimed SUBMITTED row SUBMITTED, with its request id', async () => {
      const { repo, projectId, clock, as, pass } = await setup();
      const { id } = await repo.enqueue(imageTask(projectId), clock.now());
      await repo.claim('image', 4, LEASE, as('a'));
      await repo.markSubmitStarted(id, 'k', LEASE, as('a'));
      await repo.recordSubmitted(id, { requestId: 'req-9', handle: null }, null, as('a'));
      await pass(LEASE + 1);
      const [row] = await repo.claim('image', 4, LEASE, as('b'));
      expect(row).toMatchObject({ id, status: 'SUBMITTED', remoteRequestId: 'req-9', leaseOwner: 'b' });
    });

    it('does not take a row whose lease is still live, nor its own expired rows', async () => {
      const { repo, projectId, clock, as, pass } = await setup();
      await repo.enqueue(imageTask(projectId), clock.now());
      expect(await repo.claim('image', 4, LEASE, as('a'))).toHaveLength(1);
      expect(await repo.claim('image', 4, LEASE, as('b'))).toHaveLength(0);
      await pass(LEASE + 1);
      expect(await repo.claim('image', 4, LEASE, as('a'))).toHaveLength(0);
      expect(await repo.claim('image', 4, LEASE, as('b'), false)).toHaveLength(0);
      expect(await repo.claim('image', 4, LEASE, as('b'))).toHaveLength(1);
    });

    it('limits each kind to its concurrency across all owners', async () => {
      const { repo, projectId, clock, as } = await setup();
      for (let i = 0; i < 6; i++) await repo.enqueue(imageTask(projectId, `p${i}`), clock.now());
      await repo.enqueue({ ...imageTask(projectId), kind: 'speech', input: { text: 'hi' } }, clock.now());
      expect(await repo.claim('image', 4, LEASE, as('a'))).toHaveLength(4);
      expect(await repo.claim('image', 4, LEASE, as('b'))).toHaveLength(0);
      expect(await repo.claim('speech', 2, LEASE, as('b'))).toHaveLength(1);
    });

    it('holds back a task until everything it depends on succeeded, and cancels it if one fails', async () => {
      const { repo, projectId, clock, as } = await setup();
      const image = await repo.enqueue(imageTask(projectId), clock.now());
      const clip = await repo.enqueue({ ...imageTask(projectId), kind: 'clip', dependsOn: [image.id] }, clock.now());
      expect(await repo.claim('clip', 3, LEASE, as('a'))).toHaveLength(0);
      await repo.claim('image', 4, LEASE, as('a'));
      await repo.fail(image.id, 'HTTP 422', 'no', as('a'));
      expect(await repo.get(clip.id)).toMatchObject({ status: 'CANCELLED' });
      expect(await repo.hasOutstandingWork()).toBe(false);
    });
  });

  describe('fenced writes', () => {
    it('refuses every executor write from an owner that lost the row', async () => {
      const { store, repo, projectId, clock, as, pass } = await setup();
      const { id } = await repo.enqueue(imageTask(projectId), clock.now());
      await repo.claim('image', 4, LEASE, as('a'));
      await pass(LEASE + 1);
      await recoverExpired(sweepOf(store), clock.now(), new Set(), () => undefined);
      await repo.claim('image', 4, LEASE, as('b'));
      expect(await repo.markSubmitStarted(id, 'k', LEASE, as('a'))).toEqual({ refused: 'lease' });
      expect(await repo.markSubmitStarted(id, 'k', LEASE, as('b'))).toMatchObject({ marked: { id, idempotencyKey: 'k' } });
      expect(await repo.recordSubmitted(id, { requestId: 'r', handle: null }, null, as('a'))).toBeUndefined();
      expect(await repo.renewLeases([id], LEASE, as('a'))).toEqual(new Set());
      expect(await repo.renewLeases([id], LEASE, as('b'))).toEqual(new Set([id]));
    });

    it('lets an owner that was only asleep renew its expired lease, as long as nobody took it', async () => {
      const { repo, projectId, clock, as, pass, leaseNow } = await setup();
      const { id } = await repo.enqueue(imageTask(projectId), clock.now());
      await repo.claim('image', 4, LEASE, as('a'));
      await pass(LEASE * 100);
      const before = await leaseNow();
      expect(await repo.renewLeases([id], LEASE, as('a'))).toEqual(new Set([id]));
      const after = await leaseNow();
      expect((await repo.get(id))!.leaseExpiresAt).toBeGreaterThanOrEqual(before + LEASE);
      expect((await repo.get(id))!.leaseExpiresAt).toBeLessThanOrEqual(after + LEASE);
    });
  });

  describe('recovery sweep', () => {
    it('requeues an unmarked row, parks a marked one, leaves a submitted one to be polled', async () => {
      const { store, repo, projectId, clock, as, pass } = await setup();
      const fresh = await repo.enqueue(imageTask(projectId, 'a'), clock.now());
      const marked = await repo.enqueue(imageTask(projectId, 'b'), clock.now());
      const submitted = await repo.enqueue(imageTask(projectId, 'c'), clock.now());
      await repo.claim('image', 4, LEASE, as('dead'));
      await repo.markSubmitStarted(marked.id, 'k1', LEASE, as('dead'));
      await repo.markSubmitStarted(submitted.id, 'k2', LEASE, as('dead'));
      await repo.recordSubmitted(submitted.id, { requestId: 'req', handle: null }, null, as('dead'));
      await pass(LEASE + 1);
      await recoverExpired(sweepOf(store), clock.now(), new Set(), () => undefined);
      expect(await repo.get(fresh.id)).toMatchObject({ status: 'PENDING', leaseOwner: null });
      expect(await repo.get(marked.id)).toMatchObject({ status: 'OUTCOME_UNKNOWN', charged: 'maybe' });
      expect((await repo.get(marked.id))!.unknownReason).toContain('may have accepted');
      expect(await repo.get(submitted.id)).toMatchObject({ status: 'SUBMITTED', remoteRequestId: 'req' });
    });

    it('does not recover a row whose owner renewed after the sweep looked', async () => {
      const { repo, projectId, clock, as, pass } = await setup();
      const { id } = await repo.enqueue(imageTask(projectId), clock.now());
      await repo.claim('image', 4, LEASE, as('a'));
      await pass(LEASE + 1);
      const [seen] = await repo.expiredLeases(clock.now());
      await repo.renewLeases([id], LEASE, as('a'));
      expect(await repo.recoverRequeueAll([seen!], clock.now(), 'late')).toEqual([]);
      expect(await repo.get(id)).toMatchObject({ status: 'RUNNING', leaseOwner: 'a' });
    });

    it('never parks a row whose request id was recorded after the sweep looked', async () => {
      const { repo, projectId, clock, as, pass } = await setup();
      const { id } = await repo.enqueue(imageTask(projectId), clock.now());
      await repo.claim('image', 4, LEASE, as('a'));
      await repo.markSubmitStarted(id, 'k', LEASE, as('a'));
      await pass(LEASE + 1);
      const [seen] = await repo.expiredLeases(clock.now());
      await repo.recordSubmitted(id, { requestId: 'req', handle: null }, null, as('a'));
      expect(await repo.recoverParkAll([{ task: seen!, reason: 'late' }], clock.now())).toEqual([]);
      expect(await repo.get(id)).toMatchObject({ status: 'SUBMITTED', remoteRequestId: 'req', charged: 'yes' });
    });

    it('releases a submitted row its executor left, so the same process polls it again', async () => {
      const { repo, projectId, clock, as } = await setup();
      const { id } = await repo.enqueue(imageTask(projectId), clock.now());
      await repo.claim('image', 4, LEASE, as('a'));
      await repo.markSubmitStarted(id, 'k', LEASE, as('a'));
      await repo.recordSubmitted(id, { requestId: 'req', handle: null }, null, as('a'));
      await repo.expireLease(id, as('a'));
      expect(await repo.get(id)).toMatchObject({ status: 'SUBMITTED', leaseOwner: null });
      expect(await repo.claim('image', 4, LEASE, as('a'))).toHaveLength(1);
    });

    it('holds a row released to retry later until its time comes', async () => {
      const { repo, projectId, clock, as, pass } = await setup();
      const { id } = await repo.enqueue(imageTask(projectId), clock.now());
      await repo.claim('image', 4, LEASE, as('a'));
      await repo.markSubmitStarted(id, 'k', LEASE, as('a'));
      await repo.recordSubmitted(id, { requestId: 'req', handle: null }, null, as('a'));
      expect(await repo.retryLater(id, clock.now() + 60_000, 'disk full', as('a'))).toBe(true);
      expect(await repo.claim('image', 4, LEASE, as('b'))).toHaveLength(0);
      await pass(60_001);
      expect((await repo.claim('image', 4, LEASE, as('b')))[0]).toMatchObject({ status: 'SUBMITTED', note: 'disk full' });
      expect((await repo.events(id)).map((e) => e.reason)).toContain('disk full');
    });

    it('recovers the rows of a dead owner at once, before its lease runs out', async () => {
      const { store, repo, projectId, clock, as } = await setup();
      const { id } = await repo.enqueue(imageTask(projectId), clock.now());
      await repo.claim('image', 4, LEASE, as('dead'));
      await repo.expireLeasesOf(['dead'], clock.now());
      await recoverExpired(sweepOf(store), clock.now(), new Set(), () => undefined);
      expect(await repo.get(id)).toMatchObject({ status: 'PENDING' });
    });
  });

  describe('task events', () => {
    it('logs every transition with who made it, and refuses edits', async () => {
      const { exec, repo, projectId, clock, as } = await setup();
      const { id } = await repo.enqueue(imageTask(projectId), clock.now());
      await repo.claim('image', 4, LEASE, as('a'));
      await repo.markSubmitStarted(id, 'k', LEASE, as('a'));
      await repo.parkUnknown(id, 'socket hang up', as('a'));
      await resolveUnknown(repo, id, { giveUp: true }, clock.now());
      expect((await repo.events(id)).map((e) => [e.fromStatus, e.toStatus, e.actor])).toEqual([
        [null, 'PENDING', 'person'],
        ['PENDING', 'RUNNING', 'engine'],
        ['RUNNING', 'RUNNING', 'engine'],
        ['RUNNING', 'OUTCOME_UNKNOWN', 'engine'],
        ['OUTCOME_UNKNOWN', 'FAILED', 'person'],
      ]);
      await expect(exec(`UPDATE task_events SET reason = 'x'`)).rejects.toThrow(/append-only/);
      await expect(exec(`DELETE FROM task_events`)).rejects.toThrow(/append-only/);
    });
  });

  describe("a person's decisions and spend", () => {
    async function unknownTask() {
      const s = await setup();
      const { id } = await s.repo.enqueue(imageTask(s.projectId), s.clock.now());
      await s.repo.claim('image', 4, LEASE, s.as('a'));
      await s.repo.setEstimate(id, 40_000, 'catalogue', 'USD', s.as('a'));
      await s.repo.markSubmitStarted(id, 'k', LEASE, s.as('a'));
      await s.repo.parkUnknown(id, 'reset', s.as('a'));
      return { ...s, id };
    }

    it('counts an unknown outcome as possibly charged', async () => {
      const { repo } = await unknownTask();
      expect((await repo.spend())[0]).toMatchObject({ actual: 0, estimated: 0, possiblyCharged: 40_000 });
    });

    it('adopt: SUBMITTED with the request id, ready to be polled', async () => {
      const { repo, id, clock, as, pass } = await unknownTask();
      await pass(5_000);
      await resolveUnknown(repo, id, { adopt: 'req-found' }, clock.now());
      // The poll deadline counts from the adoption, not from the lost send.
      expect(await repo.get(id)).toMatchObject({ status: 'SUBMITTED', remoteRequestId: 'req-found', charged: 'yes', leaseOwner: null, submittedAt: clock.now() });
      expect((await repo.claim('image', 4, LEASE, as('b')))[0]).toMatchObject({ status: 'SUBMITTED' });
      expect((await repo.spend())[0]).toMatchObject({ estimated: 40_000, possiblyCharged: 0 });
    });

    it('resubmit: queued again, the first attempt still counted as possibly charged', async () => {
      const { repo, id, clock } = await unknownTask();
      await resolveUnknown(repo, id, { resubmit: true }, clock.now());
      expect(await repo.get(id)).toMatchObject({ status: 'PENDING', submitStartedAt: null, costAbandoned: 40_000 });
      expect((await repo.spend())[0]!.possiblyCharged).toBe(40_000);
      expect((await repo.events(id)).at(-1)!.reason).toContain('may also have been charged');
    });

    it('give up: FAILED, still possibly charged', async () => {
      const { repo, id, clock } = await unknownTask();
      await resolveUnknown(repo, id, { giveUp: true }, clock.now());
      expect(await repo.get(id)).toMatchObject({ status: 'FAILED', charged: 'maybe' });
      expect((await repo.spend())[0]!.possiblyCharged).toBe(40_000);
    });

    it('refuses a decision on a task whose outcome is known', async () => {
      const { repo, projectId, clock } = await setup();
      const { id } = await repo.enqueue(imageTask(projectId), clock.now());
      await expect(resolveUnknown(repo, id, { giveUp: true }, clock.now())).rejects.toThrow(/only a task whose outcome is unknown/);
      expect((await repo.get(id))!.status).toBe('PENDING');
    });

    it('cancel: a pending task at once; a submitted one stays possibly charged', async () => {
      const { repo, projectId, clock, as } = await setup();
      const submitted = await repo.enqueue(imageTask(projectId, 'b'), clock.now());
      await repo.claim('image', 1, LEASE, as('a'));
      const pending = await repo.enqueue(imageTask(projectId, 'a'), clock.now());
      await repo.markSubmitStarted(submitted.id, 'k', LEASE, as('a'));
      await repo.recordSubmitted(submitted.id, { requestId: 'r', handle: null }, { cost: 10_000, source: 'quote' }, as('a'));
      expect(await repo.cancel(pending.id, clock.now())).toMatchObject({ status: 'CANCELLED', charged: 'no' });
      expect(await repo.cancel(submitted.id, clock.now())).toMatchObject({ status: 'CANCELLED', charged: 'maybe', leaseOwner: null });
      expect((await repo.spend())[0]!.possiblyCharged).toBe(10_000);
    });
  });

  describe('receipts of request ids', () => {
    const receipt = (store: Store, taskId: number, idempotencyKey: string, requestId = 'req-r') => receiptOf(store.tasks, store.databaseId, taskId, idempotencyKey, requestId);

    it('a journaled id makes a parked row SUBMITTED again, for the attempt it belongs to only', async () => {
      const { store, repo, projectId, clock, as, pass } = await setup();
      const { id } = await repo.enqueue(imageTask(projectId), clock.now());
      await repo.claim('image', 4, LEASE, as('a'));
      await repo.markSubmitStarted(id, 'k1', LEASE, as('a'));
      await pass(LEASE + 1);
      await recoverExpired(sweepOf(store), clock.now(), new Set(), () => undefined);
      expect((await repo.get(id))!.status).toBe('OUTCOME_UNKNOWN');

      expect(await repo.applyReceipt(await receipt(store, id, 'k0'), true, clock.now())).toBeUndefined();
      expect(await repo.receiptSettled(await receipt(store, id, 'k0'))).toBe(true);
      expect(await repo.receiptSettled(await receipt(store, id, 'k1'))).toBe(false);
      expect(await repo.applyReceipt(await receipt(store, id, 'k1'), true, clock.now())).toMatchObject({ status: 'SUBMITTED', remoteRequestId: 'req-r', charged: 'yes', unknownReason: null });
      expect(await repo.receiptSettled(await receipt(store, id, 'k1'))).toBe(true);
      expect((await repo.events(id)).at(-1)).toMatchObject({ fromStatus: 'OUTCOME_UNKNOWN', toStatus: 'SUBMITTED', reason: 'recorded the request id kept in the receipt journal' });
    });

    it('a receipt of an attempt a person resubmitted is collected before the step is bought again; a cancelled row keeps its status and gets the id', async () => {
      const { store, repo, projectId, clock, as } = await setup();
      const resubmitted = await repo.enqueue(imageTask(projectId, 'a'), clock.now());
      const cancelled = await repo.enqueue(imageTask(projectId, 'b'), clock.now());
      await repo.claim('image', 4, LEASE, as('a'));
      await repo.markSubmitStarted(resubmitted.id, 'k1', LEASE, as('a'));
      await repo.parkUnknown(resubmitted.id, 'lost', as('a'));
      await resolveUnknown(repo, resubmitted.id, { resubmit: true }, clock.now());
      expect(await repo.applyReceipt(await receipt(store, resubmitted.id, 'k1'), true, clock.now())).toMatchObject({ status: 'SUBMITTED', remoteRequestId: 'req-r', idempotencyKey: 'k1' });

      await repo.markSubmitStarted(cancelled.id, 'k2', LEASE, as('a'));
      await repo.cancel(cancelled.id, clock.now());
      expect(await repo.applyReceipt(await receipt(store, cancelled.id, 'k2', 'req-c'), true, clock.now())).toMatchObject({ status: 'CANCELLED', charged: 'maybe', remoteRequestId: 'req-c' });
    });

    it('the sweep records a dead worker\'s journaled id instead of parking the row, and leaves a saved result to be completed', async () => {
      const { store, repo, projectId, clock, as, pass } = await setup();
      const named = await repo.enqueue(imageTask(projectId, 'a'), clock.now());
      const saved = await repo.enqueue(imageTask(projectId, 'b'), clock.now());
      await repo.claim('image', 4, LEASE, as('a'));
      await repo.markSubmitStarted(named.id, 'k1', LEASE, as('a'));
      await repo.markSubmitStarted(saved.id, 'k2', LEASE, as('a'));
      await pass(LEASE + 1);
      const ports = sweepOf(store);
      ports.receipts.append(await receipt(store, named.id, 'k1'));
      ports.hasResult = (t) => t.id === saved.id;
      await recoverExpired(ports, clock.now(), new Set(), () => undefined);
      expect(await repo.get(named.id)).toMatchObject({ status: 'SUBMITTED', remoteRequestId: 'req-r' });
      expect(await repo.get(saved.id)).toMatchObject({ status: 'RUNNING', leaseOwner: 'a' });
    });
  });

  describe('history', () => {
    it('records a release, a dead owner\'s recovery and a later retry, each with its reason', async () => {
      const { repo, projectId, clock, as } = await setup();
      const { id } = await repo.enqueue(imageTask(projectId), clock.now());
      await repo.claim('image', 4, LEASE, as('a'));
      await repo.markSubmitStarted(id, 'k', LEASE, as('a'));
      await repo.recordSubmitted(id, { requestId: 'r', handle: null }, null, as('a'));
      expect(await repo.expireLeasesOf(['a'], clock.now())).toBe(1);
      await repo.claim('image', 4, LEASE, as('b'));
      await repo.expireLease(id, as('b'));
      await repo.claim('image', 4, LEASE, as('c'));
      await repo.retryLater(id, clock.now() + 60_000, 'still running at the provider after 31 min', as('c'));
      expect((await repo.events(id)).map((e) => e.reason).slice(-5)).toEqual([
        'its worker process is gone; recovering it now',
        'reclaimed to poll its saved request',
        'released: its worker stopped before finishing it',
        'reclaimed to poll its saved request',
        'still running at the provider after 31 min',
      ]);
    });
  });

  describe('a saved result of an attempt that the row moved on from', () => {
    it('completes the task when it was parked, cancelled or given up meanwhile, never when a person chose a new attempt', async () => {
      const { repo, projectId, clock, as } = await setup();
      // Each task's own request: one request id never belongs to two tasks.
      const out = (id: number) => ({ outputs: [{ path: '/m/a.png', sha256: 'f'.repeat(64), bytes: 1, contentType: 'image/png' }], costActual: null, requestId: `req-${id}` });
      const ids: number[] = [];
      for (const p of ['parked', 'cancelled', 'given up', 'resubmitted']) ids.push((await repo.enqueue(imageTask(projectId, p), clock.now())).id);
      await repo.claim('image', 4, LEASE, as('a'));
      for (const id of ids) await repo.markSubmitStarted(id, `k${id}`, LEASE, as('a'));
      const [parked, cancelled, givenUp, resubmitted] = ids as [number, number, number, number];
      await repo.parkUnknown(parked, 'lost', as('a'));
      await repo.cancel(cancelled, clock.now());
      await repo.parkUnknown(givenUp, 'lost', as('a'));
      await resolveUnknown(repo, givenUp, { giveUp: true }, clock.now());
      await repo.parkUnknown(resubmitted, 'lost', as('a'));
      await resolveUnknown(repo, resubmitted, { resubmit: true }, clock.now());
      for (const id of [parked, cancelled, givenUp]) {
        expect(await repo.completeAttempt(id, `k${id}`, out(id), clock.now())).toMatchObject({ status: 'SUCCEEDED', charged: 'yes', outputPath: '/m/a.png' });
      }
      expect(await repo.completeAttempt(resubmitted, `k${resubmitted}`, out(resubmitted), clock.now())).toBeUndefined();
      expect((await repo.get(resubmitted))!.status).toBe('PENDING');
    });
  });
});
