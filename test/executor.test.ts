import { describe, expect, it } from 'vitest';
import { runRemoteTask, SLOW_POLL_MS } from '../main/engine/executor.ts';
import type { ExecutorOptions } from '../main/engine/executorPorts.ts';
import { FINAL_POLL_TRIES } from '../main/engine/poller.ts';
import { PollError } from '../main/providers/port.ts';
import type { Task } from '../main/domain/tasks/model.ts';
import { imageTask, ManualClock, openTestStore } from './helpers/engine.ts';
import { FakeProvider, memoryOutputs, memoryReceipts, recording, type FakeProviderScript } from './helpers/recording.ts';
import { EngineHealth } from '../main/engine/health.ts';
import { tempDir } from './helpers/tmp.ts';
import { dataFolderMedia } from '../main/media/mediaFolder.ts';
import { OutputLocator } from '../main/engine/outputLocator.ts';

const OWNER = 'worker-a';
const OPTIONS: Omit<ExecutorOptions, 'database'> = {
  owner: OWNER,
  leaseMs: 30_000,
  poll: { intervalMs: 1_000, maxIntervalMs: 5_000, deadlineMs: 60_000 },
};
const ORDER = ['markSubmitStarted', 'submit', 'recordSubmitted', 'poll', 'complete'];

async function setup(script: FakeProviderScript = {}) {
  const dir = tempDir();
  const { store, repo } = await openTestStore(dir);
  const files = new OutputLocator(repo, dataFolderMedia(dir, 'test'));
  const clock = new ManualClock();
  const calls: string[] = [];
  const provider = new FakeProvider(script);
  const ports = {
    repo: recording(repo, calls, ORDER),
    provider: recording(provider, calls, ORDER),
    clock,
    outputs: memoryOutputs(),
    files,
    receipts: memoryReceipts(),
    health: new EngineHealth(() => undefined),
    random: () => 0.5,
    log: () => undefined,
  };
  const claim = async (): Promise<Task> => {
    const [task] = await repo.claim('image', 4, OPTIONS.leaseMs, { owner: OWNER, now: clock.now() });
    return task!;
  };
  const run = (task: Task) => runRemoteTask(task, ports, { ...OPTIONS, database: store.databaseId }, new AbortController().signal);
  return { store, repo, clock, calls, provider, claim, run, files };
}

describe('executor order (pinned: any refactor that sends before the mark must fail here)', () => {
  it('marks, sends, records the id, polls, completes, in that order', async () => {
    const t = await setup();
    const { projectId } = { projectId: 1 };
    await t.repo.enqueue(imageTask(projectId), t.clock.now());
    await t.run(await t.claim());
    expect(t.calls).toEqual(ORDER);
    expect(await t.repo.get(1)).toMatchObject({ status: 'SUCCEEDED', charged: 'yes', costEstimated: 40_000, costActual: 60_000 });
  });

  it('never submits a task restored in SUBMITTED with a saved request id', async () => {
    const t = await setup();
    await t.repo.enqueue(imageTask(1), t.clock.now());
    const first = await t.claim();
    await t.repo.markSubmitStarted(first.id, 'k', OPTIONS.leaseMs, { owner: OWNER, now: t.clock.now() });
    await t.repo.recordSubmitted(first.id, { requestId: 'req-1', handle: null }, null, { owner: OWNER, now: t.clock.now() });
    // The first worker dies; its lease runs out; another worker reclaims the row.
    t.clock.advance(OPTIONS.leaseMs + 1);
    const [restored] = await t.repo.claim('image', 4, OPTIONS.leaseMs, { owner: 'worker-b', now: t.clock.now() });
    expect(restored).toMatchObject({ status: 'SUBMITTED', remoteRequestId: 'req-1' });
    t.calls.length = 0;
    await runRemoteTask(
      restored!,
      { repo: t.repo, provider: recording(t.provider, t.calls, ORDER), clock: t.clock, outputs: memoryOutputs(), files: t.files, receipts: memoryReceipts(), health: new EngineHealth(() => undefined), random: () => 0.5, log: () => undefined },
      { ...OPTIONS, owner: 'worker-b', database: t.store.databaseId },
      new AbortController().signal,
    );
    expect(t.calls).not.toContain('submit');
    expect(t.calls).toEqual(['poll']);
    expect((await t.repo.get(1))!.status).toBe('SUCCEEDED');
  });

  it('does not send when the boundary mark changes no row (lease lost)', async () => {
    const t = await setup();
    await t.repo.enqueue(imageTask(1), t.clock.now());
    const task = await t.claim();
    await t.repo.cancel(task.id, t.clock.now());
    await t.run(task);
    expect(t.calls).toEqual(['markSubmitStarted']);
    expect(t.provider.keys).toEqual([]);
  });

  it('validates before the mark: bad input fails without a mark or a send, not charged', async () => {
    const t = await setup();
    await t.repo.enqueue({ ...imageTask(1), input: { text: 'no prompt' } }, t.clock.now());
    await t.run(await t.claim());
    expect(t.calls).toEqual([]);
    expect(await t.repo.get(1)).toMatchObject({ status: 'FAILED', charged: 'no', submitStartedAt: null });
    expect((await t.repo.get(1))!.error).toContain('needs a "prompt"');
  });

  it('parks a claimed row that was marked but has no request id instead of sending again', async () => {
    const t = await setup();
    await t.repo.enqueue(imageTask(1), t.clock.now());
    const task = await t.claim();
    await t.repo.markSubmitStarted(task.id, 'k', 1_000, { owner: OWNER, now: t.clock.now() });
    t.clock.advance(1_001);
    const [again] = await t.repo.claim('image', 4, OPTIONS.leaseMs, { owner: 'worker-b', now: t.clock.now() });
    await runRemoteTask(
      again!,
      { repo: t.repo, provider: recording(t.provider, t.calls, ORDER), clock: t.clock, outputs: memoryOutputs(), files: t.files, receipts: memoryReceipts(), health: new EngineHealth(() => undefined), random: () => 0.5, log: () => undefined },
      { ...OPTIONS, owner: 'worker-b', database: t.store.databaseId },
      new AbortController().signal,
    );
    expect(t.provider.keys).toEqual([]);
    expect(await t.repo.get(1)).toMatchObject({ status: 'OUTCOME_UNKNOWN', charged: 'maybe' });
  });
});

describe('saving the result', () => {
  it('keeps a paid result that could not be saved yet, to poll and download again later, never failing it', async () => {
    const t = await setup();
    t.provider.download = async () => {
      throw new Error('ECONNRESET');
    };
    await t.repo.enqueue(imageTask(1), t.clock.now());
    await t.run(await t.claim());
    const task = (await t.repo.get(1))!;
    expect(task).toMatchObject({ status: 'SUBMITTED', charged: 'yes', leaseOwner: null, remoteRequestId: 'req-1' });
    expect(task.note).toMatch(/could not be saved yet.*ECONNRESET/);
    expect((await t.repo.events(1)).at(-1)!.reason).toBe(task.note);
    expect(task.nextAttemptAt).toBeGreaterThan(t.clock.now());
  });
});

describe('submit outcomes', () => {
  it('requeues with backoff when the request provably never left', async () => {
    const t = await setup({ submits: [{ kind: 'never_sent', message: 'ECONNREFUSED' }] });
    await t.repo.enqueue(imageTask(1), t.clock.now());
    await t.run(await t.claim());
    const task = (await t.repo.get(1))!;
    expect(task).toMatchObject({ status: 'PENDING', submitStartedAt: null, charged: 'no', attempts: 1 });
    expect(task.nextAttemptAt).toBeGreaterThan(t.clock.now());
  });

  it('fails a definitive rejection as not charged', async () => {
    const t = await setup({ submits: [{ kind: 'rejected', message: 'HTTP 422: prompt too long' }] });
    await t.repo.enqueue(imageTask(1), t.clock.now());
    await t.run(await t.claim());
    expect(await t.repo.get(1)).toMatchObject({ status: 'FAILED', charged: 'no', error: 'HTTP 422: prompt too long' });
  });

  it('honours Retry-After on 429', async () => {
    const t = await setup({ submits: [{ kind: 'rate_limited', message: 'HTTP 429', retryAfterMs: 90_000 }] });
    await t.repo.enqueue(imageTask(1), t.clock.now());
    await t.run(await t.claim());
    expect((await t.repo.get(1))!.nextAttemptAt).toBeGreaterThanOrEqual(t.clock.now() + 90_000);
  });

  it('parks a request that may have been applied as OUTCOME_UNKNOWN', async () => {
    const t = await setup({ submits: [{ kind: 'maybe_applied', message: 'socket hang up' }] });
    await t.repo.enqueue(imageTask(1), t.clock.now());
    await t.run(await t.claim());
    expect(await t.repo.get(1)).toMatchObject({ status: 'OUTCOME_UNKNOWN', charged: 'maybe' });
    expect((await t.repo.get(1))!.unknownReason).toContain('socket hang up');
    expect(t.provider.keys).toHaveLength(1);
  });

  it('resends with the same key when the provider honours idempotency keys', async () => {
    const t = await setup({ idempotencyHeader: 'Idempotency-Key', submits: [{ kind: 'maybe_applied', message: 'timeout' }] });
    await t.repo.enqueue(imageTask(1), t.clock.now());
    await t.run(await t.claim());
    const key = `studio-${t.store.databaseId}-task-1-attempt-1`;
    expect(t.provider.keys).toEqual([key, key]);
    expect((await t.repo.get(1))!.status).toBe('SUCCEEDED');
  });

  it('gives up, not charged, after the last attempt that never left', async () => {
    const t = await setup({ submits: [{ kind: 'never_sent', message: 'ENOTFOUND' }] });
    await t.repo.enqueue({ ...imageTask(1), maxAttempts: 1 }, t.clock.now());
    await t.run(await t.claim());
    expect(await t.repo.get(1)).toMatchObject({ status: 'FAILED', charged: 'no' });
  });
});

describe('poll deadline', () => {
  it('does not count a poll that got no answer as the fresh poll after the deadline', async () => {
    const t = await setup({ pendingPolls: 1_000 });
    const deadline = t.clock.now() + OPTIONS.poll.deadlineMs;
    let failures = 0;
    t.provider.poll = async () => {
      if (t.clock.now() < deadline) return { state: 'pending', progress: 0.5 };
      if (failures++ < FINAL_POLL_TRIES - 1) throw new PollError('HTTP 503');
      return { state: 'succeeded', result: { outputs: [{ url: 'fake://o.png', contentType: 'image/png' }], costActual: null } };
    };
    await t.repo.enqueue(imageTask(1), t.clock.now());
    await t.run(await t.claim());
    expect((await t.repo.get(1))!.status).toBe('SUCCEEDED');
  });

  it('does not count a system sleep during polling against the deadline', async () => {
    const t = await setup();
    let polls = 0;
    t.provider.poll = async () => {
      polls++;
      // The lid closes for two hours after the second poll: the wall clock jumps, the monotonic one does not.
      if (polls === 2) t.clock.wall += 2 * 3_600_000;
      if (polls < 6) return { state: 'pending', progress: 0.5 };
      return { state: 'succeeded', result: { outputs: [{ url: 'fake://o.png', contentType: 'image/png' }], costActual: null } };
    };
    await t.repo.enqueue(imageTask(1), t.clock.now());
    await t.run(await t.claim());
    expect((await t.repo.get(1))!.status).toBe('SUCCEEDED');
  });

  it('after a restart the next morning, looks again at a request still running, slowly, until it finishes', async () => {
    const t = await setup();
    await t.repo.enqueue(imageTask(1), t.clock.now());
    const task = await t.claim();
    await t.repo.markSubmitStarted(task.id, 'k', OPTIONS.leaseMs, { owner: OWNER, now: t.clock.now() });
    const submitted = (await t.repo.recordSubmitted(task.id, { requestId: 'req-1', handle: null }, null, { owner: OWNER, now: t.clock.now() }))!;
    t.clock.advance(12 * 3_600_000);
    let polls = 0;
    t.provider.poll = async () => (++polls < 4 ? { state: 'pending', progress: 0.9 } : { state: 'succeeded', result: { outputs: [{ url: 'fake://o.png', contentType: 'image/png' }], costActual: null } });
    await t.run(submitted);
    const waiting = (await t.repo.get(1))!;
    expect(waiting).toMatchObject({ status: 'SUBMITTED', leaseOwner: null, note: 'still running at the provider after 720 min' });
    expect(waiting.nextAttemptAt).toBe(t.clock.now() + SLOW_POLL_MS);
    for (let round = 0; round < 5 && (await t.repo.get(1))!.status === 'SUBMITTED'; round++) {
      t.clock.advance(SLOW_POLL_MS);
      await t.run(await t.claim());
    }
    expect(await t.repo.get(1)).toMatchObject({ status: 'SUCCEEDED', note: null });
    expect(polls).toBe(4);
  });

  it('gives up as unknown when the provider cannot be asked at all after the deadline', async () => {
    const t = await setup();
    const deadline = t.clock.now() + OPTIONS.poll.deadlineMs;
    t.provider.poll = async () => {
      if (t.clock.now() < deadline) return { state: 'pending', progress: 0.5 };
      throw new PollError('HTTP 503');
    };
    await t.repo.enqueue(imageTask(1), t.clock.now());
    await t.run(await t.claim());
    expect(await t.repo.get(1)).toMatchObject({ status: 'OUTCOME_UNKNOWN' });
    expect((await t.repo.get(1))!.unknownReason).toMatch(/poll deadline \(60 s\).*could not be asked \(HTTP 503\)/);
  });

  it('hands a request still running after the deadline back to be looked at slowly: never unknown, never failed', async () => {
    const t = await setup({ never: true });
    await t.repo.enqueue(imageTask(1), t.clock.now());
    await t.run(await t.claim());
    const task = (await t.repo.get(1))!;
    expect(task).toMatchObject({ status: 'SUBMITTED', leaseOwner: null, unknownReason: null, progress: 0.5 });
    expect(task.note).toMatch(/^still running at the provider after \d+ min$/);
    expect(t.calls.filter((c) => c === 'poll').length).toBeGreaterThan(1);
    expect((await t.repo.events(1)).at(-1)).toMatchObject({ fromStatus: 'SUBMITTED', toStatus: 'SUBMITTED', reason: task.note });
  });
});
