import { describe, expect, it as base } from 'vitest';
import type { Faults } from '../main/simulator/faults.ts';
import type { RunningSimulator } from '../main/simulator/server.ts';
import type { Store } from '../main/store/port.ts';
import { chargesOf } from './helpers/charges.ts';
import { KILL_POINTS } from './helpers/killPoints.ts';
import { runStudio, startStudio } from './helpers/processes.ts';
import { simulatorForTest } from './helpers/running.ts';
import { storeKinds } from './helpers/stores.ts';
import { teamOn, type Machine } from './helpers/team.ts';

/**
 * Real worker processes, killed with SIGKILL at each boundary of the executor, against the simulator
 * over real HTTP, which counts what it charged; on each store. The lease is a minute long, so a test that
 * finishes in seconds also proves a dead owner's rows were recovered at once, not when its lease ran out:
 * by the same machine, which knows its own processes (on PostgreSQL, see crash-team.test.ts for the rows of
 * another machine's dead worker).
 */

let sim: RunningSimulator;

async function enqueue(store: Store, count = 1): Promise<number[]> {
  const project = await store.projects.ensure('Crash', Date.now());
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const task = await store.tasks.enqueue(
      { projectId: project.id, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt: `fox ${i}` } },
      Date.now(),
    );
    ids.push(task.id);
  }
  return ids;
}

async function readTask(store: Store, id: number) {
  return { task: (await store.tasks.get(id))!, events: await store.tasks.events(id) };
}

const chargesFor = (id: number) => chargesOf(sim, id);

describe.each(storeKinds())('on the $kind store', (kind) => {
  const it = base.skipIf(!kind.available);

  async function setup(engine: Record<string, unknown> = {}, faults: Faults = {}) {
    sim = await simulatorForTest({ jobMs: 800, faults });
    const team = await teamOn(kind, { STUDIO_SIMULATOR_BASE_URL: sim.url });
    const settings = { engine: { leaseMs: 60_000, tickMs: 100, poll: { intervalMs: 100, maxIntervalMs: 200 }, ...engine } };
    return { store: team.store, machine: (name: string) => team.machine(name, settings), whole: team.whole };
  }

  const worker = (m: Machine, env: Record<string, string> = {}) => startStudio(m.dataDir, ['worker', '--until-idle'], { ...m.env, ...env });
  const workerRun = (m: Machine) => runStudio(m.dataDir, ['worker', '--until-idle'], m.env);

  describe('a worker killed with SIGKILL', () => {
    it.each(KILL_POINTS)('at %s ends %s with %i charge(s), never two', async (point, status, charged) => {
      const { store, machine, whole } = await setup();
      const here = machine('machine-a');
      const [id] = (await enqueue(store)) as [number];

      const doomed = worker(here, { STUDIO_STOP_AT: point });
      await doomed.waitFor(new RegExp(`stopped at ${point} for task ${id}`));
      doomed.child.kill('SIGKILL');
      await doomed.exited;

      const started = Date.now();
      const restarted = await workerRun(here);
      expect(restarted.code, restarted.stderr).toBe(0);
      expect(Date.now() - started).toBeLessThan(20_000);

      const { task } = await readTask(store, id);
      expect(task.status).toBe(status);
      expect(chargesFor(id)).toHaveLength(charged);
      if (status === 'SUCCEEDED') {
        expect(whole(task.outputPath!, task.outputSha256!)).toBe(true);
        expect(task.costActual).toBeGreaterThan(0);
      } else {
        expect(task.unknownReason).toMatch(/may have accepted/);
        expect(task.charged).toBe('maybe');
      }
    });

    it('after an answer lost once the provider accepted: a person adopts the request it has, and the paid result is collected, not bought again', async () => {
      const { store, machine, whole } = await setup({}, { submit: ['drop-after-accept'] });
      const here = machine('machine-a');
      const [id] = (await enqueue(store)) as [number];
      await workerRun(here);
      expect((await readTask(store, id)).task.status).toBe('OUTCOME_UNKNOWN');

      const [charge] = chargesFor(id);
      const resolved = await runStudio(here.dataDir, ['resolve', String(id), '--adopt', charge!.requestId], here.env);
      expect(resolved.stdout).toContain('adopted');
      await workerRun(here);

      const { task, events } = await readTask(store, id);
      expect(task).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: charge!.requestId });
      expect(whole(task.outputPath!, task.outputSha256!)).toBe(true);
      expect(chargesFor(id)).toHaveLength(1);
      expect(events.filter((e) => e.actor === 'person').map((e) => e.reason)).toContain('adopted a request id found at the provider');
    });
  });

  describe('two worker processes on one database (on PostgreSQL, of two machines)', () => {
    it('never hold the same row: every task is charged exactly once', async () => {
      const { store, machine } = await setup({ concurrency: { image: 6 } });
      const ids = await enqueue(store, 30);
      const [a, b] = [worker(machine('machine-a')), worker(machine('machine-b'))];
      expect(await a.exited, a.stderr()).toBe(0);
      expect(await b.exited, b.stderr()).toBe(0);

      expect(sim.charges).toHaveLength(30);
      const read: Awaited<ReturnType<typeof readTask>>[] = [];
      for (const id of ids) {
        const { task, events } = await readTask(store, id);
        read.push({ task, events });
        expect(task.status).toBe('SUCCEEDED');
        expect(chargesFor(id)).toHaveLength(1);
        expect(events.filter((e) => e.reason === 'submit started')).toHaveLength(1);
      }
      const owners = new Set(read.flatMap(({ events }) => events.map((e) => (e.detail as { owner?: string })?.owner)));
      expect(owners.size).toBeGreaterThanOrEqual(2);
      // On a team database each owner id names its machine.
      if (kind.kind === 'postgres') expect(new Set([...owners].filter(Boolean).map((o) => o!.split(':')[0]))).toEqual(new Set(['machine-a', 'machine-b']));
    });
  });

  describe('a worker stopped past its lease (SIGSTOP, as in a sleep) while another takes over (on PostgreSQL, of another machine)', () => {
    it('has its next write refused when continued, and sends nothing', async () => {
      const { store, machine } = await setup({ leaseMs: 1_500 });
      const [id] = (await enqueue(store)) as [number];
      const sleeper = worker(machine('machine-a'), { STUDIO_STOP_AT: 'before-mark' });
      await sleeper.waitFor(/stopped at before-mark/);

      const other = await workerRun(machine('machine-b'));
      expect(other.code, other.stderr).toBe(0);
      expect((await readTask(store, id)).task.status).toBe('SUCCEEDED');

      sleeper.child.kill('SIGCONT');
      expect(await sleeper.exited).toBe(0);
      expect(sleeper.stderr()).toContain(`task ${id}: lease lost before the boundary mark`);
      expect(chargesFor(id)).toHaveLength(1);
      expect((await readTask(store, id)).task.status).toBe('SUCCEEDED');
    });
  });
});
