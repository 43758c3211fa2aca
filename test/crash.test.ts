import { describe, expect, it as base } from 'vitest';
import type { Faults } from '../main/simulator/faults.ts';
import type { RunningSimulator } from '../main/simulator/server.ts';
import type { Store } from '../main/store/port.ts';
import { chargesOf } from './helpers/charges.ts';
import { KILL_POINTS } from './helpers/killPoints.ts';
import { runStudio, startStudio, whenStopped } from './helpers/processes.ts';
import { simulatorForTest } from './helpers/running.ts';
import { storeKinds } from './helpers/stores.ts';
import { teamOn, type Machine } from './helpers/team.ts';
import { until } from './helpers/wait.ts';

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

/** The owners that claimed any of the tasks `ids`, from their events. */
async function claimers(store: Store, ids: number[]): Promise<Set<string>> {
  const owners = new Set<string>();
  for (const id of ids) {
    for (const e of await store.tasks.events(id)) {
      const owner = (e.detail as { owner?: string } | null)?.owner;
      if (e.reason === 'claimed' && owner) owners.add(owner);
    }
  }
  return owners;
}

describe.each(storeKinds())('on the $kind store', (kind) => {
  const it = base.skipIf(!kind.available);

  async function setup(engine: Record<string, unknown> = {}, faults: Faults = {}) {
    sim = await simulatorForTest({ jobMs: 800, faults });
    const team = await teamOn(kind, { STUDIO_SIMULATOR_BASE_URL: sim.url });
    const settings = { engine: { leaseMs: 60_000, tickMs: 100, poll: { intervalMs: 100, maxIntervalMs: 200 }, ...engine } };
    // A machine's own engine settings are written when it is first asked for; on SQLite every machine is the one
    // data folder, so a process already started keeps the settings it read.
    const machine = (name: string, own: Record<string, unknown> = {}) => team.machine(name, { engine: { ...settings.engine, ...own } });
    return { store: team.store, machine, whole: team.whole };
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

    it('after an answer lost once the provider accepted: the run looks it up before it ends, adopts the request it has, and collects the paid result, not bought again', async () => {
      const { store, machine, whole } = await setup({}, { submit: ['drop-after-accept'] });
      const here = machine('machine-a');
      const [id] = (await enqueue(store)) as [number];
      await workerRun(here);

      const [charge] = chargesFor(id);
      const { task, events } = await readTask(store, id);
      expect(events.map((e) => e.toStatus)).toContain('OUTCOME_UNKNOWN');
      expect(task).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: charge!.requestId });
      expect(whole(task.outputPath!, task.outputSha256!)).toBe(true);
      expect(chargesFor(id)).toHaveLength(1);
      expect(events.filter((e) => e.actor === 'engine').map((e) => e.reason)).toContainEqual(expect.stringMatching(/^adopted by the studio after a lookup/));
    });
  });

  describe('two worker processes on one database (on PostgreSQL, of two machines)', () => {
    it('never hold the same row: every task is charged exactly once', async () => {
      const { store, machine } = await setup();
      const ids = await enqueue(store, 30);
      // A worker claims again as soon as one of its tasks ends, before the other's next tick: the one that starts
      // first could keep every slot to the end. So the first may fill only half of the six and is held (SIGSTOP)
      // while it holds them; the second, allowed all six, then must claim beside the held rows, and the first
      // carries on beside it.
      const a = worker(machine('machine-a', { concurrency: { image: 3 } }), { STUDIO_STOP_AT: 'before-mark' });
      await a.waitFor(/stopped at before-mark/);
      await whenStopped(a.child);
      const b = worker(machine('machine-b', { concurrency: { image: 6 } }));
      await until(async () => (await claimers(store, ids)).size === 2, 30_000);
      a.child.kill('SIGCONT');
      expect(await a.exited, a.stderr()).toBe(0);
      expect(await b.exited, b.stderr()).toBe(0);

      expect(sim.charges).toHaveLength(30);
      for (const id of ids) {
        const { task, events } = await readTask(store, id);
        expect(task.status).toBe('SUCCEEDED');
        expect(chargesFor(id)).toHaveLength(1);
        expect(events.filter((e) => e.reason === 'submit started')).toHaveLength(1);
      }
      const owners = await claimers(store, ids);
      expect(owners.size).toBe(2);
      // On a team database each owner id names its machine.
      if (kind.kind === 'postgres') expect(new Set([...owners].map((o) => o.split(':')[0]))).toEqual(new Set(['machine-a', 'machine-b']));
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
