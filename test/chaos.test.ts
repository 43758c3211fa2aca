import Database from 'better-sqlite3';
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../main/simulator/faults.ts';
import { startSimulator } from '../main/simulator/server.ts';
import type { Kind, Task, TaskEvent } from '../main/domain/tasks/model.ts';
import { taskOfKey } from './helpers/charges.ts';
import { startStudio } from './helpers/processes.ts';
import { storeKinds, type StoreKind } from './helpers/stores.ts';
import { teamOn, type Team } from './helpers/team.ts';

const SEED = Number(process.env.CHAOS_SEED ?? 20261129);

/**
 * Per store: the tasks, and the machines whose workers are killed. On PostgreSQL fewer tasks keep the run short,
 * and two machines share the team database: a row of a worker killed on one comes back to the other when its
 * lease runs out. The trouble another program makes is the store's own: a lock held longer than the studio waits
 * for one (SQLite's whole file; a transaction holding the team database's task table); and on SQLite, whose
 * files are the machine's own, saves that fail for a while, as on a full disk.
 */
const RUNS: { kind: StoreKind; tasks: [Kind, number][]; machines: string[]; seconds: number; blockSaves: boolean }[] = storeKinds().map((kind) =>
  kind.kind === 'sqlite'
    ? { kind, tasks: [['image', 80], ['clip', 70], ['speech', 60]], machines: ['this-machine'], seconds: 240, blockSaves: true }
    : { kind, tasks: [['image', 30], ['clip', 25], ['speech', 20]], machines: ['machine-a', 'machine-b'], seconds: 100, blockSaves: false },
);

/** Another program holds the database longer than the studio waits for a lock, until the promise it returns is let go. */
async function holdDatabase(team: Team): Promise<() => Promise<void>> {
  if (team.kind === 'sqlite') {
    const lock = new Database(team.where);
    lock.pragma('busy_timeout = 10000');
    lock.exec('BEGIN EXCLUSIVE');
    return async () => {
      lock.exec('COMMIT');
      lock.close();
    };
  }
  const other = new pg.Client({ connectionString: team.where });
  await other.connect();
  await other.query('BEGIN');
  await other.query('LOCK TABLE tasks IN EXCLUSIVE MODE');
  return async () => {
    await other.query('COMMIT');
    await other.end();
  };
}

/**
 * Chaos: tasks across the kinds against a simulator that injects faults at random, while the worker processes
 * are killed with SIGKILL at random moments and started again, until every task is terminal; on each store.
 * Pass: no task charged twice, no task lost, every task terminal, and every unknown outcome explained by a
 * kill inside its send window or by a fault the simulator says it injected.
 */
describe.each(RUNS)('chaos on the $kind.kind store', ({ kind, tasks: counts, machines: names, seconds, blockSaves }) => {
  const total = counts.reduce((n, [, c]) => n + c, 0);
  it.skipIf(!kind.available)(`survives random SIGKILLs and injected faults without paying twice or losing a task (${total} tasks)`, async () => {
    const random = seededRandom(SEED);
    const sim = await startSimulator({
      jobMs: 300,
      faults: {
        seed: SEED,
        // Latency widens the send window, so some kills land inside it.
        latencyMs: 40,
        rates: {
          submit: {
            'drop-after-accept': 0.03,
            'error-after-accept': 0.02,
            'accepted-5xx': 0.03,
            'cut-body': 0.03,
            unavailable: 0.03,
            'rate-limit': 0.03,
            reject: 0.01,
          },
          job: { fail: 0.02, 'expired-result': 0.01, 'never-finish': 0.01, 'result-401-once': 0.03 },
          status: { 'server-error': 0.05 },
        },
      },
    });
    const settings = {
      engine: {
        leaseMs: 3_000,
        tickMs: 50,
        concurrency: { image: 8, clip: 6, speech: 6 },
        poll: { intervalMs: 50, maxIntervalMs: 200, deadlineMs: 4_000 },
      },
      providers: { simulator: { baseUrl: sim.url } },
    };
    const team = await teamOn(kind);
    const machines = names.map((name) => team.machine(name, settings));
    const { store } = team;
    const project = await store.projects.ensure('Chaos', Date.now());
    // The project's media folder is reached through a link that the test swaps, atomically, to nowhere and back:
    // while it points nowhere every save fails, as on a full disk.
    const media = join(machines[0]!.dataDir, 'projects', String(project.id), 'media');
    const pointMedia = (to: 'real' | 'nowhere') => {
      symlinkSync(`${media}-${to}`, `${media}.next`);
      renameSync(`${media}.next`, media);
    };
    if (blockSaves) {
      mkdirSync(`${media}-real`, { recursive: true });
      pointMedia('real');
    }
    for (const [kind, count] of counts) {
      for (let i = 0; i < count; i++) {
        const input = kind === 'speech' ? { text: `Line ${i} of the chaos script.` } : { prompt: `${kind} ${i}`, ...(kind === 'clip' ? { duration: 0.5 } : {}) };
        await store.tasks.enqueue({ projectId: project.id, kind, provider: 'simulator', model: `sim-${kind}-1`, input, maxAttempts: 8 }, Date.now());
      }
    }
    // A request the provider says is still running is known, not pending work: it is looked at slowly.
    const active = async () =>
      (await store.tasks.list()).filter(
        (t) => t.status === 'PENDING' || t.status === 'RUNNING' || (t.status === 'SUBMITTED' && !(t.note ?? '').startsWith('still running')),
      ).length;

    const killed: { pid: number; at: number }[] = [];
    const started = Date.now();
    let workers = 0;
    const trouble = { locks: 0, blockedSaves: 0, workersPaused: 0 };
    while ((await active()) > 0 && Date.now() - started < seconds * 1000) {
      const worker = startStudio(machines[workers % machines.length]!.dataDir, ['worker'], machines[workers % machines.length]!.env);
      workers++;
      await worker.waitFor(/started as/);
      if (workers % 3 === 1) {
        trouble.locks++;
        const release = await holdDatabase(team);
        await new Promise((r) => setTimeout(r, 6_000));
        await release();
      } else if (workers % 3 === 2 && blockSaves) {
        trouble.blockedSaves++;
        pointMedia('nowhere');
        await new Promise((r) => setTimeout(r, 2_000 + random() * 2_000));
        pointMedia('real');
      }
      await new Promise((r) => setTimeout(r, 300 + random() * 2_500));
      worker.child.kill('SIGKILL');
      await worker.exited;
      killed.push({ pid: worker.child.pid!, at: Date.now() });
      if (/engine paused/.test(worker.stderr())) trouble.workersPaused++;
    }
    // A last worker on each machine, with no kill, finishes what backoff delayed.
    if ((await active()) > 0) {
      const last = machines.map((m) => startStudio(m.dataDir, ['worker'], m.env));
      workers += last.length;
      const end = Date.now() + 120_000;
      while ((await active()) > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
      for (const w of last) w.child.kill('SIGTERM');
      await Promise.all(last.map((w) => w.exited));
    }

    const tasks = await store.tasks.list();
    const events = new Map<number, TaskEvent[]>();
    for (const t of tasks) events.set(t.id, await store.tasks.events(t.id));
    await sim.close();

    const chargesByTask = new Map<number, number>();
    for (const c of sim.charges) {
      const id = taskOfKey(c.idempotencyKey);
      chargesByTask.set(id, (chargesByTask.get(id) ?? 0) + 1);
    }
    const duplicates = [...chargesByTask.values()].filter((n) => n > 1).length;
    // A paid result is lost when the provider made it (no fault failed or expired it) and its task neither
    // holds it nor waits for a person's decision with it.
    const unmade = new Set(sim.injected.filter((f) => f.fault === 'fail' || f.fault === 'expired-result').map((f) => f.requestId));
    const byId = new Map(tasks.map((t) => [t.id, t]));
    const paidResultsLost = sim.charges.filter((c) => {
      if (unmade.has(c.requestId)) return false;
      const task = byId.get(taskOfKey(c.idempotencyKey));
      const holds = task?.remoteRequestId === c.requestId && (task.status === 'SUCCEEDED' || task.status === 'SUBMITTED');
      return !task || !(holds || task.status === 'OUTCOME_UNKNOWN');
    });
    const killedPids = new Set(killed.map((k) => k.pid));
    // Only these faults can leave an outcome unknown: an answer lost after accepting, or a job that never ends.
    const unknowing = new Set(['drop-after-accept', 'error-after-accept', 'malformed-json', 'slow-body']);
    const injectedTasks = new Set(sim.injected.filter((f) => unknowing.has(f.fault)).map((f) => taskOfKey(f.idempotencyKey)));

    const unexplained = tasks
      .filter((t) => t.status === 'OUTCOME_UNKNOWN')
      .filter((t) => !explained(t, events.get(t.id)!, killedPids, injectedTasks));
    const byStatus = Object.fromEntries(['SUCCEEDED', 'FAILED', 'OUTCOME_UNKNOWN', 'CANCELLED'].map((s) => [s, tasks.filter((t) => t.status === s).length]));
    const neverFinishing = new Set(sim.injected.filter((f) => f.fault === 'never-finish').map((f) => f.requestId));
    const unsettled = tasks.filter((t) => ['PENDING', 'RUNNING', 'SUBMITTED'].includes(t.status));
    const figures = {
      store: kind.kind,
      machines: machines.length,
      seed: SEED,
      tasks: tasks.length,
      workersStarted: workers,
      kills: killed.length,
      charges: sim.charges.length,
      faultsInjected: sim.injected.length,
      duplicates,
      paidResultsLost: paidResultsLost.length,
      ...trouble,
      unknowns: byStatus.OUTCOME_UNKNOWN,
      stillRunning: unsettled.length,
      unknownsAfterKill: tasks.filter((t) => t.status === 'OUTCOME_UNKNOWN' && /studio stopped/.test(t.unknownReason ?? '')).length,
      unexplained: unexplained.length,
      ...byStatus,
      seconds: Math.round((Date.now() - started) / 1000),
    };
    mkdirSync('test-results', { recursive: true });
    writeFileSync(kind.kind === 'sqlite' ? 'test-results/chaos.json' : 'test-results/chaos-postgres.json', JSON.stringify(figures, null, 2));
    console.log('chaos figures', figures);

    expect(tasks).toHaveLength(total);
    expect(unsettled.filter((t) => !(neverFinishing.has(t.remoteRequestId) && /^still running at the provider/.test(t.note ?? '')))).toEqual([]);
    expect(duplicates).toBe(0);
    expect(paidResultsLost.map((c) => [c.requestId, c.idempotencyKey, byId.get(taskOfKey(c.idempotencyKey))])).toEqual([]);
    expect(trouble.locks).toBeGreaterThan(0);
    if (blockSaves) expect(trouble.blockedSaves).toBeGreaterThan(0);
    expect(unexplained.map((t) => [t.id, t.unknownReason, events.get(t.id)])).toEqual([]);
    expect(killed.length).toBeGreaterThan(5);
    for (const t of tasks) {
      if (t.status === 'SUCCEEDED') {
        expect(chargesByTask.get(t.id)).toBe(1);
        expect(team.whole(t.outputPath!, t.outputSha256!), `task ${t.id}: ${t.outputPath}`).toBe(true);
      }
      if (t.charged === 'no') expect(chargesByTask.get(t.id) ?? 0).toBe(0);
    }
  }, (seconds + 150) * 1000);
});

/** An unknown outcome is explained by a kill of the worker that had marked it, or by a fault injected on it. */
function explained(task: Task, events: TaskEvent[], killedPids: Set<number>, injectedTasks: Set<number>): boolean {
  if (injectedTasks.has(task.id)) return true;
  const mark = events.filter((e) => e.reason === 'submit started').at(-1);
  const claim = events.filter((e) => e.reason === 'claimed' && e.at <= (mark?.at ?? 0)).at(-1);
  const owner = (claim?.detail as { owner?: string } | null)?.owner ?? '';
  return /studio stopped/.test(task.unknownReason ?? '') && killedPids.has(Number(owner.split(':')[1]));
}
