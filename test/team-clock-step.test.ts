import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../main/simulator/server.ts';
import { KLING } from './fakes/falStandIn.ts';
import { falStandIn } from './fakes/falStandIn.ts';
import type { Ledger } from './fakes/providers.ts';
import { startFake } from './fakes/server.ts';
import { chargesOf } from './helpers/charges.ts';
import { FAL_KEY, falMedia, type FalMedia } from './helpers/falStudio.ts';
import { postgresAvailable } from './helpers/postgres.ts';
import { runStudio, startStudio } from './helpers/processes.ts';
import { simulatorForTest } from './helpers/running.ts';
import { storeKinds } from './helpers/stores.ts';
import { teamOn } from './helpers/team.ts';
import { until } from './helpers/wait.ts';

/**
 * A team machine whose wall clock is stepped while its worker runs (set by hand, or by network time), in a real
 * worker process whose Date is shifted and then stepped by a preload, on a real PostgreSQL, against provider
 * stand-ins over HTTP on the right clock. The monotonic clock is not stepped, as on a real machine.
 */

const SHIFT = fileURLToPath(new URL('./helpers/clockShift.mjs', import.meta.url));
const HOUR = 3_600_000;
const postgres = storeKinds().find((k) => k.kind === 'postgres')!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const stepped = (shiftMs: number, jumpMs: number, afterMs: number) => ({
  NODE_OPTIONS: `--import ${SHIFT}`,
  CLOCK_SHIFT_MS: String(shiftMs),
  CLOCK_JUMP_MS: String(jumpMs),
  CLOCK_JUMP_AFTER_MS: String(afterMs),
});

let media: FalMedia;
beforeAll(async () => {
  media = await falMedia();
}, 60_000);

describe.skipIf(!postgresAvailable)('a team machine whose clock is stepped while its worker runs', () => {
  it.each([
    ['an hour', HOUR],
    ['3 minutes', 3 * 60_000],
  ])(
    'stepped back %s: a send right after, whose answer is cut, is found by its lookup and adopted; one charge',
    async (_, stepMs) => {
      const sim: RunningSimulator = await simulatorForTest({ jobMs: 200 });
      const { store, machine } = await teamOn(postgres, { STUDIO_SIMULATOR_BASE_URL: sim.url });
      const engine = { leaseMs: 30_000, tickMs: 100, poll: { intervalMs: 100, maxIntervalMs: 200 }, lookup: { intervalMs: 300, tries: 3 } };
      const m = machine('stepped', { engine });
      const right = machine('right', { engine });
      const project = await store.projects.ensure('Stepped clock', Date.now());
      const startedAt = Date.now();
      const worker = startStudio(m.dataDir, ['worker'], { ...m.env, ...stepped(0, -stepMs, 4_000) });
      await worker.waitFor(/started as/);
      // The clock has been stepped; without a new measurement the next one is a minute away.
      await sleep(Math.max(0, startedAt + 5_000 - Date.now()));
      sim.setFaults({ submit: ['drop-after-accept'] });
      const { id } = await store.tasks.enqueue(
        { projectId: project.id, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt: 'a pier at noon' }, maxAttempts: 3 },
        Date.now(),
      );

      await until(async () => (await store.tasks.get(id))!.status === 'OUTCOME_UNKNOWN', 20_000);
      // Another machine, whose clock is right, looks it up too.
      const other = startStudio(right.dataDir, ['worker'], right.env);

      // The lookups settle it, or leave it to the person, who then does what the studio suggests.
      await until(async () => {
        const task = (await store.tasks.get(id))!;
        if (task.status === 'SUCCEEDED') return true;
        return task.status === 'OUTCOME_UNKNOWN' && /it needs your decision$/.test((await store.tasks.events(id)).at(-1)!.reason);
      }, 30_000);
      if ((await store.tasks.get(id))!.status === 'OUTCOME_UNKNOWN') {
        expect((await runStudio(m.dataDir, ['resolve', String(id), '--resubmit'], m.env)).code).toBe(0);
        await until(async () => (await store.tasks.get(id))!.status === 'SUCCEEDED', 30_000);
      }
      worker.child.kill('SIGTERM');
      other.child.kill('SIGTERM');
      await Promise.all([worker.exited, other.exited]);

      expect(chargesOf(sim, id)).toHaveLength(1);
      const events = await store.tasks.events(id);
      expect(events.some((e) => /^adopted by the studio after a lookup/.test(e.reason))).toBe(true);
      const parked = events.find((e) => e.toStatus === 'OUTCOME_UNKNOWN')!;
      // Parked on the database's clock: not before the send started.
      expect(parked.at).toBeGreaterThanOrEqual((await store.tasks.get(id))!.submitStartedAt! - 1_000);
    },
    60_000,
  );

  it('set right while a fal request is not listed yet: it is never called "never accepted", and is adopted once listed; one charge', async () => {
    const ledger: Ledger = { charged: [] };
    let submits = 0;
    // Kling's job ends 10 s after the submit; only the first submit's answer is cut after fal queued and charged it.
    const fal = falStandIn(ledger, media, { jobMs: 10_000, dropAnswer: () => ++submits === 1 });
    const fake = await startFake(fal.route);
    const { store, machine } = await teamOn(postgres, { STUDIO_FAL_BASE_URL: fake.url, FAL_KEY });
    const m = machine('set-right', {
      engine: {
        leaseMs: 3_000,
        tickMs: 50,
        concurrency: { image: 0, clip: 2, speech: 0, render: 0 },
        poll: { intervalMs: 100, maxIntervalMs: 300, deadlineMs: 60_000 },
        lookup: { intervalMs: 300, tries: 3 },
      },
    });
    const project = await store.projects.ensure('Kling', Date.now());
    const { id } = await store.tasks.enqueue(
      { projectId: project.id, kind: 'clip', provider: 'fal', model: KLING, input: { prompt: 'push in', image_url: 'https://example.com/start.png', duration: 5 } },
      Date.now(),
    );
    const lookups = async () => (await store.tasks.events(id)).filter((e) => (e.detail as { lookup?: number } | null)?.lookup !== undefined);

    // An hour behind, told so at start; set right 5 s after it started, while the request runs at fal.
    const worker = startStudio(m.dataDir, ['worker'], { ...m.env, ...stepped(-HOUR, HOUR, 5_000) });
    await worker.waitFor(/1 h 0 min behind the team database's/);
    await until(async () => (await store.tasks.get(id))!.status === 'SUCCEEDED' || (await lookups()).some((e) => /needs your decision/.test(e.reason)), 40_000);
    worker.child.kill('SIGTERM');
    await worker.exited;

    const said = (await lookups()).map((e) => e.reason);
    expect(said.length).toBeGreaterThan(3);
    expect(said.filter((r) => /never accepted|needs your decision/.test(r))).toEqual([]);
    expect(await store.tasks.get(id)).toMatchObject({ remoteRequestId: 'fal-req-1', attempts: 1 });
    expect(ledger.charged).toEqual(['fal-req-1']);
    expect(worker.stderr()).not.toMatch(/the system slept/);
  }, 60_000);

  it('set right: a minute on, the machine still recovers a row whose worker is gone and looks up a new unknown outcome at once', async () => {
    const sim: RunningSimulator = await simulatorForTest({ jobMs: 200 });
    const { store, machine } = await teamOn(postgres, { STUDIO_SIMULATOR_BASE_URL: sim.url });
    // It claims nothing itself: the rows below are this test's to set up, and a recovered row stays requeued.
    const m = machine('set-right', {
      engine: { leaseMs: 3_000, tickMs: 50, concurrency: { image: 0, clip: 0, speech: 0, render: 0 }, poll: { intervalMs: 100, maxIntervalMs: 200 }, lookup: { intervalMs: 1_000, tries: 3 } },
    });
    const worker = startStudio(m.dataDir, ['worker'], { ...m.env, ...stepped(-HOUR, HOUR, 3_000) });
    await worker.waitFor(/started as/);
    // Past the minute after which the clock is measured again in any case.
    await sleep(65_000);

    const project = await store.projects.ensure('After the fix', Date.now());
    const enqueue = async (prompt: string) =>
      (await store.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt } }, Date.now())).id;
    // An unknown outcome left by a worker that stopped after it started sending (nothing reached the simulator).
    const unknown = await enqueue('a gull');
    await store.tasks.claim('image', 1, 1_000, { owner: 'gone:1:x', now: Date.now() });
    const key = `studio-task-${unknown}-attempt-1`;
    await store.tasks.markSubmitStarted(unknown, key, 1_000, { owner: 'gone:1:x', now: Date.now() });
    await store.tasks.parkUnknown(unknown, 'the studio stopped after it started sending this request', { owner: 'gone:1:x', now: Date.now(), attempt: key });
    // A row whose worker, on another machine, stopped: its lease runs out in a second.
    const left = await enqueue('a heron');
    await store.tasks.claim('image', 1, 1_000, { owner: 'gone:2:y', now: Date.now() });

    await until(async () => (await store.tasks.events(unknown)).some((e) => (e.detail as { lookup?: number } | null)?.lookup !== undefined), 15_000);
    await until(async () => (await store.tasks.get(left))!.status === 'PENDING', 15_000);
    worker.child.kill('SIGTERM');
    await worker.exited;
    expect(await store.tasks.get(left)).toMatchObject({ status: 'PENDING', leaseOwner: null });
    expect(sim.charges).toEqual([]);
  }, 120_000);
});
