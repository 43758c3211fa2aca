import { describe, expect, it } from 'vitest';
import { systemClock } from '../main/adapters/systemClock.ts';
import { pollUntilDone, type PollOutcome } from '../main/engine/poller.ts';
import { FalAdapter } from '../main/providers/fal.ts';
import type { ProviderAdapter, PreparedRequest } from '../main/providers/port.ts';
import { SimulatorAdapter } from '../main/providers/simulatorAdapter.ts';
import { startSimulator } from '../main/simulator/server.ts';
import { createSupervisor } from '../main/studio.ts';
import type { Task } from '../main/domain/tasks/model.ts';
import { FAL_MODEL, falQueue, realMedia, type FalOptions } from './fakes/providers.ts';
import { startFake } from './fakes/server.ts';
import { simulatedStudio } from './helpers/simulatedStudio.ts';
import { until } from './helpers/wait.ts';

const JOB_MS = 1_500;
/** fal's own client polls every 500 ms (fal-js libs/client/src/queue.ts DEFAULT_POLL_INTERVAL). */
const FAL_CLIENT_POLL_MS = 500;
const POLL = { intervalMs: FAL_CLIENT_POLL_MS, maxIntervalMs: 2_000, deadlineMs: 60_000 };

/**
 * Sends one request and follows it to its end as the engine does, with a row that always keeps its lease.
 * Returns how it ended, how long after the request's end at the provider it was noticed (at most), the
 * status calls made (stream openings and polls) and the progress saves.
 */
async function follow(adapter: Pick<ProviderAdapter, 'submit' | 'poll' | 'watch'>, request: PreparedRequest, jobMs: number) {
  const sent = Date.now();
  const accepted = await adapter.submit(request, { idempotencyKey: 'k-1' });
  const calls = { polls: 0, streams: 0, saves: 0 };
  const counted: Pick<ProviderAdapter, 'poll' | 'watch'> = {
    poll: (remote, signal) => (calls.polls++, adapter.poll(remote, signal)),
    watch: (remote, heard, signal) => (calls.streams++, adapter.watch!(remote, heard, signal)),
  };
  const task = { id: 1, remoteRequestId: accepted.requestId, model: request.model, remoteHandle: accepted.handle, submittedAt: Date.now() } as Task;
  const outcome: PollOutcome = await pollUntilDone(
    task,
    { repo: { saveProgress: async () => (calls.saves++, true) }, provider: counted, clock: systemClock, random: () => 0.5, log: () => undefined },
    { ...POLL, owner: 'me', leaseMs: 30_000 },
    new AbortController().signal,
  );
  return { outcome, lateMs: Date.now() - (sent + jobMs), calls };
}

async function falFollow(opts: FalOptions) {
  const fake = await startFake(falQueue({ charged: [] }, (await realMedia()).png, { jobMs: JOB_MS, ...opts }));
  const fal = new FalAdapter({ key: 'fal-test-key-123456', baseUrl: fake.url });
  const result = await follow(fal, fal.prepare({ kind: 'image', model: FAL_MODEL, input: { prompt: 'a fox' } }), JOB_MS);
  return { ...result, fake };
}

describe('noticing a finished job', () => {
  it('follows fal’s status stream: noticed within 300 ms of its end, asking less than fal’s own client', async () => {
    const { outcome, lateMs, fake } = await falFollow({});
    expect(outcome.state).toBe('succeeded');
    expect(lateMs).toBeLessThan(300);
    const statusCalls = fake.count('GET', /\/status/);
    expect(fake.count('GET', /\/status\/stream\?logs=0$/)).toBe(1);
    // Polling every 500 ms asks at least JOB_MS / 500 + 1 times.
    expect(statusCalls).toBeLessThan(JOB_MS / FAL_CLIENT_POLL_MS + 1);
  });

  it('polls when fal’s stream closes before the request ends, and when it cannot be opened', async () => {
    for (const stream of ['cut', 'off'] as const) {
      const { outcome, calls, fake } = await falFollow({ stream });
      expect(outcome.state).toBe('succeeded');
      expect(calls.streams).toBe(1);
      expect(calls.polls).toBeGreaterThan(1);
      expect(fake.count('GET', /\/status$/)).toBe(calls.polls);
    }
  });

  it('follows the simulator’s status stream too, saving its progress on the way', async () => {
    const sim = await startSimulator({ jobMs: JOB_MS });
    try {
      const adapter = new SimulatorAdapter(sim.url);
      const { outcome, lateMs, calls } = await follow(adapter, adapter.prepare({ kind: 'image', model: 'sim-image-1', input: { prompt: 'a fox' } }), JOB_MS);
      expect(outcome.state).toBe('succeeded');
      expect(lateMs).toBeLessThan(300);
      expect(calls).toMatchObject({ streams: 1, polls: 0 });
      expect(calls.saves).toBeGreaterThanOrEqual(1);
    } finally {
      await sim.close();
    }
  });
});

describe('no waiting on a tick', () => {
  it('starts a dependent within 100 ms of what it needs succeeding, with a tick of a minute', async () => {
    const { studio, providers } = await simulatedStudio({
      jobMs: 300,
      settings: (url) => ({ engine: { tickMs: 60_000 }, providers: { simulator: { baseUrl: url } } }),
    });
    const projectId = (await studio.projects.ensure('Film', Date.now())).id;
    const image = await studio.tasks.enqueue({ projectId, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt: 'a fox' } }, Date.now());
    const engine = createSupervisor(studio, providers.get);
    engine.start();
    try {
      const clip = await studio.tasks.enqueue(
        { projectId, kind: 'clip', provider: 'simulator', model: 'sim-clip-1', input: { prompt: 'it runs', duration: 1 }, dependsOn: [image.id] },
        Date.now(),
      );
      await until(async () => (await studio.tasks.get(clip.id))!.status === 'SUCCEEDED', 20_000);
      const succeeded = (await studio.tasks.events(image.id)).find((e) => e.toStatus === 'SUCCEEDED')!.at;
      const claimed = (await studio.tasks.events(clip.id)).find((e) => e.reason === 'claimed')!.at;
      expect(claimed - succeeded).toBeGreaterThanOrEqual(0);
      expect(claimed - succeeded).toBeLessThan(100);
    } finally {
      await engine.stop();
    }
  });
});
