import { describe, expect, it as base } from 'vitest';
import { resolveUnknown } from '../main/engine/decisions.ts';
import { runRemoteTask } from '../main/engine/executor.ts';
import { recoverExpired } from '../main/engine/recoverySweep.ts';
import type { TaskStore } from '../main/store/port.ts';
import { imageTask } from './helpers/engine.ts';
import { executorPorts, LEASE, optionsOf, OWNER, withMark } from './helpers/executorUnderTest.ts';
import { FakeProvider, sweepOf } from './helpers/recording.ts';
import { receiptOf } from './helpers/receipts.ts';
import { openUnderTest, type StoreUnderTest } from './helpers/storeUnderTest.ts';
import { storeKinds } from './helpers/stores.ts';

/**
 * A worker whose boundary write committed but whose answer was held up (its link to the team database gone silent)
 * longer than its lease. Meanwhile another machine parked the row as unknown, a person resubmitted it, and a claim of
 * the same process (the same owner id) took it back. The old attempt must never be sent, nor written over the new
 * one; and a request id of the old attempt heard after the row moved on is kept and collected, never dropped.
 */

const receipt = (s: StoreUnderTest, taskId: number, idempotencyKey: string, requestId: string) => receiptOf(s.repo, s.store.databaseId, taskId, idempotencyKey, requestId);

/** Parked as unknown by the recovery sweep once the lease of `key` ran out, then resubmitted by a person. */
async function parkAndResubmit(s: StoreUnderTest, id: number) {
  await s.pass(LEASE + 1);
  await recoverExpired(sweepOf(s.store), s.clock.now(), new Set(), () => undefined);
  expect((await s.repo.get(id))!.status).toBe('OUTCOME_UNKNOWN');
  await resolveUnknown(s.repo, id, { resubmit: true }, s.clock.now());
}

describe.each(storeKinds())('the $kind store fences the writes of a marked attempt by that attempt', (kind) => {
  const it = base.skipIf(!kind.available);

  it('does not send an attempt whose answer came back after the row was parked, resubmitted and claimed again by the same owner', async () => {
    const s = await openUnderTest(kind);
    const { id } = await s.repo.enqueue(imageTask(s.projectId), s.clock.now());
    const [task] = await s.repo.claim('image', 4, LEASE, s.as(OWNER));
    const provider = new FakeProvider();
    // The boundary write commits; its answer arrives only after all this happened elsewhere.
    const slowMark: TaskStore['markSubmitStarted'] = async (...args) => {
      const mark = await s.repo.markSubmitStarted(...args);
      await parkAndResubmit(s, id);
      expect(await s.repo.claim('image', 4, LEASE, s.as(OWNER))).toMatchObject([{ id, status: 'RUNNING', leaseOwner: OWNER }]);
      return mark;
    };
    const logs: string[] = [];
    await runRemoteTask(task!, executorPorts(s, withMark(s.repo, slowMark), provider, logs), optionsOf(s), new AbortController().signal);

    expect(provider.keys).toEqual([]);
    expect(logs).toContain(`task ${id}: lease lost before sending; stopping`);
    // The claim after the resubmit is untouched: its own attempt is still to be marked and sent.
    expect(await s.repo.get(id)).toMatchObject({ status: 'RUNNING', leaseOwner: OWNER, submitStartedAt: null, idempotencyKey: null, attempts: 1 });
  });

  it('renews before a send, records an id, requeues or parks only at the attempt it marked, whoever the owner', async () => {
    const s = await openUnderTest(kind);
    const { id } = await s.repo.enqueue(imageTask(s.projectId), s.clock.now());
    await s.repo.claim('image', 4, LEASE, s.as(OWNER));
    await s.repo.markSubmitStarted(id, 'k1', LEASE, s.as(OWNER));
    expect(await s.repo.renewMarked(id, LEASE, { ...s.as(OWNER), attempt: 'k1' })).toBe(true);
    await parkAndResubmit(s, id);
    await s.repo.claim('image', 4, LEASE, s.as(OWNER));
    const old = { ...s.as(OWNER), attempt: 'k1' };
    // The owner alone no longer tells the attempts apart: the heartbeat's renewal holds the new claim.
    expect(await s.repo.renewLeases([id], LEASE, s.as(OWNER))).toEqual(new Set([id]));
    expect(await s.repo.renewMarked(id, LEASE, old)).toBe(false);
    await s.repo.markSubmitStarted(id, 'k2', LEASE, s.as(OWNER));
    expect(await s.repo.renewMarked(id, LEASE, old)).toBe(false);
    expect(await s.repo.recordSubmitted(id, { requestId: 'req-old', handle: null }, null, old)).toBeUndefined();
    expect(await s.repo.noteRequestId(id, 'req-old', old)).toBeUndefined();
    expect(await s.repo.requeue(id, s.clock.now(), 'refused before sending', old)).toBeUndefined();
    expect(await s.repo.parkUnknown(id, 'reset', old)).toBeUndefined();
    expect(await s.repo.fail(id, 'refused', 'no', old)).toBeUndefined();
    expect(await s.repo.get(id)).toMatchObject({ status: 'RUNNING', idempotencyKey: 'k2', attempts: 2, remoteRequestId: null });
    expect(await s.repo.renewMarked(id, LEASE, { ...s.as(OWNER), attempt: 'k2' })).toBe(true);
  });

  describe('a request id of an earlier attempt heard after the row moved on', () => {
    it('is collected by the worker that heard it: the step a person resubmitted meanwhile is not bought again', async () => {
      const s = await openUnderTest(kind);
      const { id } = await s.repo.enqueue(imageTask(s.projectId), s.clock.now());
      const [task] = await s.repo.claim('image', 4, LEASE, s.as(OWNER));
      const provider = new FakeProvider();
      const accept = provider.submit.bind(provider);
      // The request is out for longer than the lease: the row is parked and resubmitted before its answer arrives.
      provider.submit = async (...args) => {
        await parkAndResubmit(s, id);
        return accept(...args);
      };
      await runRemoteTask(task!, executorPorts(s, s.repo, provider, []), optionsOf(s), new AbortController().signal);
      expect(await s.repo.get(id)).toMatchObject({ status: 'SUBMITTED', remoteRequestId: 'req-1', idempotencyKey: `studio-${s.store.databaseId}-task-${id}-attempt-1` });

      const [again] = await s.repo.claim('image', 4, LEASE, s.as('worker-b'));
      await runRemoteTask(again!, executorPorts(s, s.repo, provider, []), optionsOf(s, 'worker-b'), new AbortController().signal);
      expect(provider.keys).toEqual([`studio-${s.store.databaseId}-task-${id}-attempt-1`]);
      expect(await s.repo.get(id)).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: 'req-1', charged: 'yes', attempts: 1 });
    });

    it('is taken by a resubmitted row before it is bought again, and its result polled; the spend counts it once', async () => {
      const s = await openUnderTest(kind);
      const { id } = await s.repo.enqueue(imageTask(s.projectId, 'a fox', { estimate: { cost: 40_000, source: 'catalogue', currency: 'USD' } }), s.clock.now());
      await s.repo.claim('image', 4, LEASE, s.as(OWNER));
      await s.repo.markSubmitStarted(id, 'k1', LEASE, s.as(OWNER));
      await parkAndResubmit(s, id);
      expect((await s.repo.spend())[0]).toMatchObject({ estimated: 0, possiblyCharged: 40_000 });
      // A claim after the resubmit, not marked yet: its executor's boundary write is then refused, nothing sent.
      await s.repo.claim('image', 4, LEASE, s.as('worker-b'));

      expect(await s.repo.applyReceipt(await receipt(s, id, 'k1', 'req-1'), true, s.clock.now())).toMatchObject({
        status: 'SUBMITTED',
        remoteRequestId: 'req-1',
        idempotencyKey: 'k1',
        charged: 'yes',
        leaseOwner: null,
      });
      expect(await s.repo.markSubmitStarted(id, 'k2', LEASE, s.as('worker-b'))).toEqual({ refused: 'lease' });
      expect((await s.repo.spend())[0]).toMatchObject({ estimated: 40_000, possiblyCharged: 0 });
      expect((await s.repo.events(id)).at(-1)).toMatchObject({
        toStatus: 'SUBMITTED',
        reason: 'the request of an earlier attempt was named after the task had moved on; its result is collected',
        detail: { requestId: 'req-1', attempt: 'k1' },
      });
      expect(await s.repo.receiptSettled(await receipt(s, id, 'k1', 'req-1'))).toBe(true);
      expect(await s.repo.claim('image', 4, LEASE, s.as('worker-c'))).toMatchObject([{ id, status: 'SUBMITTED', remoteRequestId: 'req-1' }]);
    });

    it('is collected by a sibling task when the row\'s later attempt is an unknown outcome: that attempt stays the row\'s to look up and ask about', async () => {
      const s = await openUnderTest(kind);
      const { id } = await s.repo.enqueue(imageTask(s.projectId, 'a fox', { estimate: { cost: 40_000, source: 'catalogue', currency: 'USD' } }), s.clock.now());
      await s.repo.claim('image', 4, LEASE, s.as(OWNER));
      const markedAt = s.clock.now();
      await s.repo.markSubmitStarted(id, 'k1', LEASE, s.as(OWNER));
      await parkAndResubmit(s, id);
      await s.pass(120_000);
      await s.repo.claim('image', 4, LEASE, s.as('worker-b'));
      await s.repo.markSubmitStarted(id, 'k2', LEASE, s.as('worker-b'));
      // Attempt 2 was sent too and its answer cut: it may be paid, and only a lookup or a person can tell.
      await s.repo.parkUnknown(id, 'reset after sending', { ...s.as('worker-b'), attempt: 'k2' });
      expect((await s.repo.spend())[0]).toMatchObject({ estimated: 0, possiblyCharged: 80_000 });
      const late = { ...(await receipt(s, id, 'k1', 'req-1')), at: s.clock.now() };

      const sibling = await s.repo.applyReceipt(late, true, s.clock.now());
      expect(sibling).toMatchObject({ status: 'SUBMITTED', remoteRequestId: 'req-1', idempotencyKey: 'k1', charged: 'yes', costEstimated: 40_000, leaseOwner: null });
      expect(sibling!.id).not.toBe(id);
      // Sent when attempt 1 was marked, not when its id was heard: its request, known and taken, makes no lookup of
      // attempt 2 (sent two minutes later) ambiguous.
      const sentAt = sibling!.submitStartedAt!;
      if (kind.kind === 'sqlite') expect(sentAt).toBe(markedAt);
      expect(sentAt).toBeLessThan(late.at - 60_000);
      const unknown = (await s.repo.get(id))!;
      expect(await s.repo.sameInputOverlapping(unknown, unknown.submitStartedAt! - 120_000, s.clock.now())).toEqual([]);
      expect(await s.repo.get(id)).toMatchObject({
        status: 'OUTCOME_UNKNOWN',
        idempotencyKey: 'k2',
        remoteRequestId: null,
        unknownReason: 'reset after sending',
        charged: 'maybe',
        costAbandoned: 0,
      });
      // Attempt 1 is the sibling's, charged; attempt 2 is still possibly charged: each counted once.
      expect((await s.repo.spend())[0]).toMatchObject({ estimated: 40_000, possiblyCharged: 40_000 });
      // Still looked up: the next lookup of unknown outcomes takes it.
      await s.pass(1_000);
      expect((await s.repo.dueForLookup(['fake'], 5, 1_000, s.clock.now(), 10)).map((due) => due.task.id)).toEqual([id]);
      expect(await s.repo.receiptSettled(late)).toBe(true);
      expect(await s.repo.applyReceipt(late, true, s.clock.now())).toBeUndefined();
      expect(await s.repo.list({ projectId: s.projectId })).toHaveLength(2);
      // A person still decides attempt 2: resubmitting it counts it as abandoned, beside the sibling's charge.
      expect(await s.repo.resubmit(id, s.clock.now())).toMatchObject({ status: 'PENDING', costAbandoned: 40_000 });
      expect((await s.repo.spend())[0]).toMatchObject({ estimated: 40_000, possiblyCharged: 40_000 });
    });

    it('takes off the abandoned amount only an attempt a resubmit counted there, whichever task collects it', async () => {
      const s = await openUnderTest(kind);
      const { id } = await s.repo.enqueue(imageTask(s.projectId, 'a fox', { estimate: { cost: 40_000, source: 'catalogue', currency: 'USD' } }), s.clock.now());
      // Attempt k1 was retried by the engine (counted nowhere), attempt k2 parked and resubmitted (counted as abandoned).
      await s.repo.claim('image', 4, LEASE, s.as(OWNER));
      await s.repo.markSubmitStarted(id, 'k1', LEASE, s.as(OWNER));
      await s.repo.requeue(id, s.clock.now(), 'temporary failure', { ...s.as(OWNER), attempt: 'k1' });
      await s.repo.claim('image', 4, LEASE, s.as(OWNER));
      await s.repo.markSubmitStarted(id, 'k2', LEASE, s.as(OWNER));
      await parkAndResubmit(s, id);
      await s.repo.claim('image', 4, LEASE, s.as(OWNER));
      await s.repo.markSubmitStarted(id, 'k3', LEASE, s.as(OWNER));
      await s.repo.recordSubmitted(id, { requestId: 'req-3', handle: null }, null, { ...s.as(OWNER), attempt: 'k3' });
      expect((await s.repo.spend())[0]).toMatchObject({ estimated: 40_000, possiblyCharged: 40_000 });

      // k1's request is collected by a sibling: k2 still stands as abandoned.
      expect(await s.repo.applyReceipt(await receipt(s, id, 'k1', 'req-1'), true, s.clock.now())).toMatchObject({ remoteRequestId: 'req-1', charged: 'yes' });
      expect(await s.repo.get(id)).toMatchObject({ remoteRequestId: 'req-3', costAbandoned: 40_000 });
      expect((await s.repo.spend())[0]).toMatchObject({ estimated: 80_000, possiblyCharged: 40_000 });
      // k2's request is collected by a second sibling: what its resubmit counted is counted as charged now.
      expect(await s.repo.applyReceipt(await receipt(s, id, 'k2', 'req-2'), true, s.clock.now())).toMatchObject({ remoteRequestId: 'req-2', charged: 'yes' });
      expect(await s.repo.get(id)).toMatchObject({ remoteRequestId: 'req-3', costAbandoned: 0 });
      expect((await s.repo.spend())[0]).toMatchObject({ estimated: 120_000, possiblyCharged: 0 });
    });

    it('is taken by a row requeued by the engine after that attempt, whose abandoned amount never counted it', async () => {
      const s = await openUnderTest(kind);
      const { id } = await s.repo.enqueue(imageTask(s.projectId, 'a fox', { estimate: { cost: 40_000, source: 'catalogue', currency: 'USD' } }), s.clock.now());
      await s.repo.claim('image', 4, LEASE, s.as(OWNER));
      await s.repo.markSubmitStarted(id, 'k1', LEASE, s.as(OWNER));
      await parkAndResubmit(s, id);
      await s.repo.claim('image', 4, LEASE, s.as(OWNER));
      await s.repo.markSubmitStarted(id, 'k2', LEASE, s.as(OWNER));
      await s.repo.requeue(id, s.clock.now() + 60_000, 'temporary failure', { ...s.as(OWNER), attempt: 'k2' });
      expect((await s.repo.spend())[0]).toMatchObject({ estimated: 0, possiblyCharged: 40_000 });

      expect(await s.repo.applyReceipt(await receipt(s, id, 'k2', 'req-2'), true, s.clock.now())).toMatchObject({
        id,
        status: 'SUBMITTED',
        remoteRequestId: 'req-2',
        idempotencyKey: 'k2',
        costAbandoned: 40_000,
      });
      // k2 is charged, k1 (which the resubmit counted) still possibly.
      expect((await s.repo.spend())[0]).toMatchObject({ estimated: 40_000, possiblyCharged: 40_000 });
    });

    it('is collected by a sibling task when the row\'s later attempt already left: each attempt counted once, once however often heard', async () => {
      const s = await openUnderTest(kind);
      const input = imageTask(s.projectId, 'a fox', { estimate: { cost: 40_000, source: 'catalogue', currency: 'USD' } });
      const { id } = await s.repo.enqueue(input, s.clock.now());
      await s.repo.claim('image', 4, LEASE, s.as(OWNER));
      const markedAt = s.clock.now();
      await s.repo.markSubmitStarted(id, 'k1', LEASE, s.as(OWNER));
      await parkAndResubmit(s, id);
      await s.repo.claim('image', 4, LEASE, s.as('worker-b'));
      await s.repo.markSubmitStarted(id, 'k2', LEASE, s.as('worker-b'));
      await s.repo.recordSubmitted(id, { requestId: 'req-2', handle: null }, null, { ...s.as('worker-b'), attempt: 'k2' });
      expect((await s.repo.spend())[0]).toMatchObject({ estimated: 40_000, possiblyCharged: 40_000 });
      const late = { ...(await receipt(s, id, 'k1', 'req-1')), handle: { statusUrl: 'http://127.0.0.1/req-1' }, at: s.clock.now() };
      expect(await s.repo.receiptSettled(late)).toBe(false);

      const sibling = await s.repo.applyReceipt(late, true, s.clock.now());
      expect(sibling).toMatchObject({
        projectId: s.projectId,
        kind: 'image',
        provider: 'fake',
        model: 'fake-image',
        input: { prompt: 'a fox' },
        status: 'SUBMITTED',
        remoteRequestId: 'req-1',
        remoteHandle: { statusUrl: 'http://127.0.0.1/req-1' },
        idempotencyKey: 'k1',
        charged: 'yes',
        attempts: 1,
        costEstimated: 40_000,
        costEstimateSource: 'catalogue',
        costAbandoned: 0,
        // Sent when its attempt was marked; known to be accepted only when its id was heard.
        submitStartedAt: markedAt,
        submittedAt: late.at,
        leaseOwner: null,
      });
      expect(sibling!.id).not.toBe(id);
      expect(sibling!.inputHash).toBe((await s.repo.get(id))!.inputHash);
      // The later attempt is untouched; what its resubmit counted as abandoned is the sibling's now.
      expect(await s.repo.get(id)).toMatchObject({ status: 'SUBMITTED', remoteRequestId: 'req-2', idempotencyKey: 'k2', costAbandoned: 0 });
      expect((await s.repo.spend())[0]).toMatchObject({ estimated: 80_000, possiblyCharged: 0 });
      expect((await s.repo.events(id)).at(-1)).toMatchObject({
        reason: `the paid request of its earlier attempt 1 is collected as task ${sibling!.id}`,
        detail: { requestId: 'req-1', attempt: 'k1', collectedAs: sibling!.id },
      });
      expect(await s.repo.events(sibling!.id)).toMatchObject([
        { fromStatus: null, toStatus: 'SUBMITTED', reason: `the paid request of task ${id}'s earlier attempt, named after that task had moved on`, detail: { requestId: 'req-1', attempt: 'k1', of: id } },
      ]);
      expect(await s.repo.receiptSettled(late)).toBe(true);

      const written = [(await s.repo.events(id)).length, (await s.repo.events(sibling!.id)).length];
      for (let heard = 0; heard < 2; heard++) expect(await s.repo.applyReceipt(late, true, s.clock.now())).toBeUndefined();
      expect(await s.repo.list({ projectId: s.projectId })).toHaveLength(2);
      expect([(await s.repo.events(id)).length, (await s.repo.events(sibling!.id)).length]).toEqual(written);
      expect((await s.repo.spend())[0]).toMatchObject({ estimated: 80_000, possiblyCharged: 0 });
      // Nobody holds it: the next claim polls it like any submitted request.
      expect(await s.repo.claim('image', 4, LEASE, s.as('worker-c'))).toMatchObject([{ id: sibling!.id, status: 'SUBMITTED', remoteRequestId: 'req-1' }]);
    });

    it('is kept in the history of a row whose later attempt left when the provider cannot be asked by id, once however often it is heard', async () => {
      const s = await openUnderTest(kind);
      const { id } = await s.repo.enqueue(imageTask(s.projectId), s.clock.now());
      await s.repo.claim('image', 4, LEASE, s.as(OWNER));
      await s.repo.markSubmitStarted(id, 'k1', LEASE, s.as(OWNER));
      await parkAndResubmit(s, id);
      await s.repo.claim('image', 4, LEASE, s.as(OWNER));
      await s.repo.markSubmitStarted(id, 'k2', LEASE, s.as(OWNER));
      expect(await s.repo.receiptSettled(await receipt(s, id, 'k1', 'req-1'))).toBe(false);

      for (let heard = 0; heard < 2; heard++) expect(await s.repo.applyReceipt(await receipt(s, id, 'k1', 'req-1'), false, s.clock.now())).toBeUndefined();
      expect(await s.repo.get(id)).toMatchObject({ status: 'RUNNING', idempotencyKey: 'k2', remoteRequestId: null });
      const late = (await s.repo.events(id)).filter((e) => e.reason.startsWith('the request of an earlier attempt'));
      expect(late).toMatchObject([
        {
          fromStatus: 'RUNNING',
          toStatus: 'RUNNING',
          reason: 'the request of an earlier attempt was named after the task had moved on; that attempt may have been charged',
          detail: { requestId: 'req-1', attempt: 'k1' },
        },
      ]);
      expect(await s.repo.receiptSettled(await receipt(s, id, 'k1', 'req-1'))).toBe(true);
      // A key this task never marked is no attempt of it: nothing is written.
      expect(await s.repo.applyReceipt(await receipt(s, id, 'k0', 'req-0'), true, s.clock.now())).toBeUndefined();
      expect(await s.repo.list({ projectId: s.projectId })).toHaveLength(1);
      expect((await s.repo.events(id)).filter((e) => e.reason.startsWith('the request of an earlier attempt'))).toHaveLength(1);
    });
  });
});
