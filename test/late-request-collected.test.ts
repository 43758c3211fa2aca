import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it as base } from 'vitest';
import { LocalOutputStore } from '../main/adapters/outputStore.ts';
import { resolveUnknown } from '../main/engine/decisions.ts';
import { reconcile } from '../main/engine/reconciler.ts';
import { runRemoteTask } from '../main/engine/executor.ts';
import type { ExecutorPorts } from '../main/engine/executorPorts.ts';
import { EngineHealth } from '../main/engine/health.ts';
import { recoverExpired } from '../main/engine/recoverySweep.ts';
import { dataFolderMedia } from '../main/media/mediaFolder.ts';
import { OutputLocator } from '../main/engine/outputLocator.ts';
import type { ProviderAdapter } from '../main/providers/port.ts';
import { SimulatorAdapter } from '../main/providers/simulatorAdapter.ts';
import { chargesOf } from './helpers/charges.ts';
import { LEASE, optionsOf, OWNER } from './helpers/executorUnderTest.ts';
import { memoryReceipts, sweepOf } from './helpers/recording.ts';
import { simulatorForTest } from './helpers/running.ts';
import { openUnderTest, type StoreUnderTest } from './helpers/storeUnderTest.ts';
import { storeKinds, type StoreKind } from './helpers/stores.ts';
import { tempDir } from './helpers/tmp.ts';

/**
 * A request whose answer came back after its task had moved on: the row was parked as unknown, a person resubmitted
 * it, and the second attempt was bought and collected meanwhile. Both requests were paid at the provider; the first
 * one's result is collected too, by a sibling task, never dropped, and the spend counts each request once.
 */

function ports(s: StoreUnderTest, provider: ProviderAdapter, media: ReturnType<typeof dataFolderMedia>, logs: string[]): ExecutorPorts {
  return {
    repo: s.repo,
    provider,
    clock: s.clock,
    outputs: new LocalOutputStore(media),
    files: new OutputLocator(s.repo, media),
    receipts: memoryReceipts(),
    health: new EngineHealth(() => undefined),
    random: () => 0.5,
    log: (m) => logs.push(m),
  };
}

/**
 * A fox image whose attempt 1 is accepted (and charged) at the simulator, but whose answer reaches the worker only
 * after its lease ran out, the row was parked, a person resubmitted it, and worker-b ran attempt 2: collected, or
 * with its answer cut after the simulator accepted and charged it (`cut`), left an unknown outcome of its own.
 */
async function answeredLate(kind: StoreKind, attempt2: 'collected' | 'cut') {
  const s = await openUnderTest(kind);
  const sim = await simulatorForTest({ jobMs: 0 });
  const simulator = new SimulatorAdapter(sim.url);
  const media = dataFolderMedia(tempDir(), 'test');
  const logs: string[] = [];
  const { id } = await s.repo.enqueue({ projectId: s.projectId, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt: 'a fox' } }, s.clock.now());

  const late: ProviderAdapter = Object.assign(Object.create(simulator) as SimulatorAdapter, {
    submit: async (...args: Parameters<SimulatorAdapter['submit']>) => {
      const accepted = await simulator.submit(...args);
      await s.pass(LEASE + 1);
      await recoverExpired(sweepOf(s.store), s.clock.now(), new Set(), () => undefined);
      await resolveUnknown(s.repo, id, { resubmit: true }, s.clock.now());
      if (attempt2 === 'cut') sim.setFaults({ submit: ['drop-after-accept'] });
      const [again] = await s.repo.claim('image', 4, LEASE, s.as('worker-b'));
      await runRemoteTask(again!, ports(s, simulator, media, logs), optionsOf(s, 'worker-b'), new AbortController().signal);
      const status = attempt2 === 'cut' ? 'OUTCOME_UNKNOWN' : 'SUCCEEDED';
      expect(await s.repo.get(id)).toMatchObject({ status, idempotencyKey: `studio-${s.store.databaseId}-task-${id}-attempt-2` });
      return accepted;
    },
  });
  const [first] = await s.repo.claim('image', 4, LEASE, s.as(OWNER));
  await runRemoteTask(first!, ports(s, late, media, logs), optionsOf(s), new AbortController().signal);

  const [r1, r2] = chargesOf(sim, id);
  expect([r1?.idempotencyKey, r2?.idempotencyKey]).toEqual([`studio-${s.store.databaseId}-task-${id}-attempt-1`, `studio-${s.store.databaseId}-task-${id}-attempt-2`]);
  return { s, sim, simulator, media, logs, id, r1, r2 };
}

describe.each(storeKinds())('on the $kind store, the paid request of an earlier attempt named after its task moved on', (kind) => {
  const it = base.skipIf(!kind.available);

  it('is collected by a sibling task: both results saved, two charges at the provider, each counted once', async () => {
    // Attempt 1's answer comes after another worker bought and collected attempt 2.
    const { s, sim, simulator, media, logs, id, r1, r2 } = await answeredLate(kind, 'collected');
    const tasks = await s.repo.list({ projectId: s.projectId });
    expect(tasks).toHaveLength(2);
    const sibling = tasks.find((t) => t.id !== id)!;
    expect(sibling).toMatchObject({ status: 'SUBMITTED', remoteRequestId: r1!.requestId, idempotencyKey: `studio-${s.store.databaseId}-task-${id}-attempt-1`, leaseOwner: null });
    expect(logs).toContain(`task ${id}: request ${r1!.requestId} of attempt studio-${s.store.databaseId}-task-${id}-attempt-1 was named after the task had moved on; collected as task ${sibling.id}`);

    // A worker collects it like any submitted request.
    const [collect] = await s.repo.claim('image', 4, LEASE, s.as('worker-c'));
    expect(collect).toMatchObject({ id: sibling.id });
    await runRemoteTask(collect!, ports(s, simulator, media, logs), optionsOf(s, 'worker-c'), new AbortController().signal);

    expect(await s.repo.get(id)).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: r2!.requestId, charged: 'yes', costAbandoned: 0 });
    expect(await s.repo.get(sibling.id)).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: r1!.requestId, charged: 'yes' });
    const saved = [...(await s.repo.outputs(id)), ...(await s.repo.outputs(sibling.id))];
    expect(saved).toHaveLength(2);
    for (const output of saved) expect(existsSync(media.resolve(output.path))).toBe(true);
    const files = readdirSync(join(media.base, 'projects', String(s.projectId), 'media')).filter((f) => f.endsWith('.png')).sort();
    expect(files).toEqual([`task-${id}-a2.png`, `task-${sibling.id}-a1.png`].sort());
    expect(sim.charges).toHaveLength(2);
    // Each paid request is counted once: billed, none left as possibly charged.
    expect((await s.repo.spend())[0]).toMatchObject({ actual: r1!.billed + r2!.billed, possiblyCharged: 0 });
    // The lists a person reads show it as a task of its own, made from nothing and used by nothing.
    expect((await s.repo.page(s.projectId, 0, 10)).tasks.map((t) => t.id)).toEqual([sibling.id, id]);
    expect((await s.repo.library({}, 0, 10)).items.map((i) => i.task.id).sort()).toEqual([id, sibling.id].sort());
    expect(await s.repo.related(sibling.id)).toEqual({ dependsOn: [], dependents: [] });
  });

  it('is collected by a sibling task while the later attempt, its answer cut, stays an unknown outcome that is still looked up', async () => {
    // Attempt 1's answer comes after attempt 2 was accepted and charged with its answer cut: an unknown outcome of its own.
    const { s, sim, simulator, media, logs, id, r1, r2 } = await answeredLate(kind, 'cut');
    const sibling = (await s.repo.list({ projectId: s.projectId })).find((t) => t.id !== id)!;
    expect(sibling).toMatchObject({ status: 'SUBMITTED', remoteRequestId: r1!.requestId, idempotencyKey: `studio-${s.store.databaseId}-task-${id}-attempt-1` });
    // Attempt 2 is still the row's: unknown, to be looked up and asked about, never written over by attempt 1.
    expect(await s.repo.get(id)).toMatchObject({ status: 'OUTCOME_UNKNOWN', idempotencyKey: `studio-${s.store.databaseId}-task-${id}-attempt-2`, remoteRequestId: null, charged: 'maybe' });
    // A lookup never offers attempt 1's request, the sibling's now; a person adopts attempt 2's.
    const { candidates } = await reconcile(s.repo, new OutputLocator(s.repo, media), simulator, id, s.clock.now());
    expect(candidates.map((c) => c.requestId)).not.toContain(r1!.requestId);
    expect(await s.repo.adopt(id, r1!.requestId, s.clock.now())).toBeUndefined();
    expect(await s.repo.adopt(id, r2!.requestId, s.clock.now())).toMatchObject({ status: 'SUBMITTED', remoteRequestId: r2!.requestId });

    // A worker collects both like any submitted requests.
    const collect = await s.repo.claim('image', 4, LEASE, s.as('worker-c'));
    expect(collect.map((t) => t.id).sort()).toEqual([id, sibling.id].sort());
    for (const task of collect) await runRemoteTask(task, ports(s, simulator, media, logs), optionsOf(s, 'worker-c'), new AbortController().signal);
    expect(await s.repo.get(id)).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: r2!.requestId, charged: 'yes', costAbandoned: 0 });
    expect(await s.repo.get(sibling.id)).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: r1!.requestId, charged: 'yes' });
    expect([...(await s.repo.outputs(id)), ...(await s.repo.outputs(sibling.id))]).toHaveLength(2);
    expect(sim.charges).toHaveLength(2);
    expect((await s.repo.spend())[0]).toMatchObject({ actual: r1!.billed + r2!.billed, possiblyCharged: 0 });
  });
});
