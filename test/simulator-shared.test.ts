import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Faults } from '../main/simulator/faults.ts';
import type { Charge } from '../main/simulator/job.ts';
import { startSimulator } from '../main/simulator/server.ts';
import { openStudio } from '../main/studio.ts';
import type { Task } from '../main/domain/tasks/model.ts';
import { taskOfKey } from './helpers/charges.ts';
import { runStudio, startStudio, writeSettings } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';

/**
 * Real worker processes on one data folder with the default simulator, which each runs in-process over
 * the folder's shared job store. The simulator's own charge ledger says how often each request was paid.
 */

const ENGINE = { leaseMs: 1_500, tickMs: 100, concurrency: { image: 2 }, poll: { intervalMs: 100, maxIntervalMs: 300 } };

async function enqueue(dataDir: string, count: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const input = JSON.stringify({ prompt: `fox ${i}` });
    const { code, stdout, stderr } = await runStudio(dataDir, ['enqueue', '--project', 'Shared', '--kind', 'image', '--provider', 'simulator', '--model', 'sim-image-1', '--input', input]);
    expect(code, stderr).toBe(0);
    ids.push(Number(/\d+/.exec(stdout)![0]));
  }
  return ids;
}

async function tasks(dataDir: string): Promise<Task[]> {
  const studio = await openStudio(dataDir);
  try {
    return await studio.tasks.list();
  } finally {
    await studio.close();
  }
}

/** The ledger of every simulator that ran on the folder, read through one more simulator on its store. */
async function ledger(dataDir: string): Promise<Charge[]> {
  const sim = await startSimulator({ stateDir: join(dataDir, 'simulator') });
  try {
    return (await (await fetch(`${sim.url}/_sim/charges`)).json()) as Charge[];
  } finally {
    await sim.close();
  }
}

const chargesOf = (charges: Charge[], id: number) => charges.filter((c) => taskOfKey(c.idempotencyKey) === id);

async function until<T>(look: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const found = await look();
    if (found !== undefined) return found;
    if (Date.now() > end) throw new Error(`no ${what} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('two worker processes on one data folder with the default simulator', () => {
  it('the survivor collects the jobs a SIGKILLed worker submitted to its own simulator: every task succeeds, each charged once', async () => {
    const dataDir = tempDir();
    writeSettings(dataDir, { engine: ENGINE });

    // Both simulators are up before anything is enqueued, so neither can learn of the other's jobs from
    // the store as it starts: only from the store as it is shared.
    const workers = [startStudio(dataDir, ['worker']), startStudio(dataDir, ['worker'])];
    const owners = await Promise.all(
      workers.map(async (w) => {
        await w.waitFor(/worker: started as \S+/);
        return /worker: started as (\S+)/.exec(w.stderr())![1]!;
      }),
    );
    const ids = await enqueue(dataDir, 6);

    // Whichever worker first holds recorded requests, and none in the middle of being sent, is killed.
    const [doomed, orphans] = await until(async () => {
      const all = await tasks(dataDir);
      for (const [i, owner] of owners.entries()) {
        const held = all.filter((t) => t.leaseOwner === owner);
        if (held.length > 0 && held.every((t) => t.status === 'SUBMITTED' && t.remoteRequestId)) return [i, held] as const;
      }
      return undefined;
    }, 'requests submitted by one worker');
    workers[doomed]!.child.kill('SIGKILL');
    await workers[doomed]!.exited;

    const survivor = workers[1 - doomed]!;
    const after = await until(async () => {
      const all = await tasks(dataDir);
      return all.every((t) => t.status === 'SUCCEEDED' || t.status === 'FAILED' || t.status === 'OUTCOME_UNKNOWN') ? all : undefined;
    }, 'every task ended', 40_000);
    survivor.child.kill('SIGTERM');
    expect(await survivor.exited, survivor.stderr()).toBe(0);

    expect(after.map((t) => [t.id, t.status]), survivor.stderr()).toEqual(ids.map((id) => [id, 'SUCCEEDED']));
    for (const orphan of orphans) expect(after.find((t) => t.id === orphan.id)!.remoteRequestId).toBe(orphan.remoteRequestId);

    const charges = await ledger(dataDir);
    expect(charges).toHaveLength(ids.length);
    for (const id of ids) expect(chargesOf(charges, id)).toHaveLength(1);
  }, 90_000);
});

describe('a worker meets the faults that follow an acceptance', () => {
  it.each<[string, Faults]>([
    ['a 500 or 504 naming the request', { submit: ['accepted-5xx'] }],
    ['a body cut after the headers', { submit: ['cut-body'] }],
    ['a result refused once with a 401', { job: ['result-401-once'] }],
  ])('%s: the task succeeds with one charge', async (_, faults) => {
    const sim = await startSimulator({ jobMs: 300, faults });
    try {
      const dataDir = tempDir();
      writeSettings(dataDir, { engine: ENGINE });
      const [id] = (await enqueue(dataDir, 1)) as [number];
      const run = await runStudio(dataDir, ['worker', '--until-idle'], { STUDIO_SIMULATOR_BASE_URL: sim.url });
      expect(run.code, run.stderr).toBe(0);

      const [task] = await tasks(dataDir);
      expect(task, run.stderr).toMatchObject({ id, status: 'SUCCEEDED', remoteRequestId: sim.charges[0]!.requestId });
      expect(sim.injected).toHaveLength(1);
      expect(chargesOf(sim.charges, id)).toHaveLength(1);
    } finally {
      await sim.close();
    }
  }, 30_000);
});
