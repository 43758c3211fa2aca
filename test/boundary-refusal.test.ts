import { describe, expect, it as base } from 'vitest';
import { runRemoteTask } from '../main/engine/executor.ts';
import { recoverExpired } from '../main/engine/recoverySweep.ts';
import type { TaskStore } from '../main/store/port.ts';
import { imageTask } from './helpers/engine.ts';
import { executorPorts, LEASE, optionsOf, OWNER, withMark } from './helpers/executorUnderTest.ts';
import { FakeProvider, sweepOf } from './helpers/recording.ts';
import { openUnderTest } from './helpers/storeUnderTest.ts';
import { storeKinds } from './helpers/stores.ts';

/**
 * The boundary write says why it changed no row, and only a budget refusal fails a task for budget. A worker that
 * stalled before its mark lost the row (requeued by the recovery sweep); by the time it read the row again, a claim
 * of its own process had taken it back, RUNNING, unsent and its own: it used to fail the task "past its budget" in a
 * project with no budget, cancelling what depended on it.
 */

describe.each(storeKinds())('the $kind boundary write', (kind) => {
  const it = base.skipIf(!kind.available);

  it('refused because the row moved on is a lost lease, not a budget: the task and its dependents carry on', async () => {
    const s = await openUnderTest(kind);
    const { id } = await s.repo.enqueue(imageTask(s.projectId), s.clock.now());
    const dependent = await s.repo.enqueue(imageTask(s.projectId, 'then this', { dependsOn: [id] }), s.clock.now());
    const [stalled] = await s.repo.claim('image', 4, LEASE, s.as(OWNER));
    // The worker stalls past its lease before its mark; the sweep requeues the unsent row.
    await s.pass(LEASE + 1);
    await recoverExpired(sweepOf(s.store), s.clock.now(), new Set(), () => undefined);
    expect((await s.repo.get(id))!.status).toBe('PENDING');
    // Its mark is refused; then, before it reads the row, its own process claims the row again.
    const markThenReclaimed: TaskStore['markSubmitStarted'] = async (...args) => {
      const mark = await s.repo.markSubmitStarted(...args);
      expect(mark).toEqual({ refused: 'lease' });
      expect(await s.repo.claim('image', 4, LEASE, s.as(OWNER))).toMatchObject([{ id, status: 'RUNNING', leaseOwner: OWNER }]);
      return mark;
    };
    const provider = new FakeProvider();
    const logs: string[] = [];
    await runRemoteTask(stalled!, executorPorts(s, withMark(s.repo, markThenReclaimed), provider, logs), optionsOf(s), new AbortController().signal);

    expect(provider.keys).toEqual([]);
    expect(logs).toContain(`task ${id}: lease lost before the boundary mark; stopping`);
    expect(await s.repo.get(id)).toMatchObject({ status: 'RUNNING', leaseOwner: OWNER, error: null, submitStartedAt: null });
    expect(await s.repo.get(dependent.id)).toMatchObject({ status: 'PENDING' });
  });

  it('refused by the budget fails the task for its budget, nothing sent, not charged', async () => {
    const s = await openUnderTest(kind);
    await s.store.projects.setBudget(s.projectId, 10_000);
    const { id } = await s.repo.enqueue(imageTask(s.projectId, 'a fox', { estimate: { cost: 40_000, source: 'catalogue', currency: 'USD' } }), s.clock.now());
    const [task] = await s.repo.claim('image', 4, LEASE, s.as(OWNER));
    expect(await s.repo.markSubmitStarted(id, 'k', LEASE, s.as('someone-else'))).toEqual({ refused: 'lease' });
    const provider = new FakeProvider();
    await runRemoteTask(task!, executorPorts(s, s.repo, provider, []), optionsOf(s), new AbortController().signal);

    expect(provider.keys).toEqual([]);
    const failed = await s.repo.get(id);
    expect(failed).toMatchObject({ status: 'FAILED', charged: 'no', submitStartedAt: null });
    expect(failed!.error).toContain('would take the project past its budget');
  });
});
