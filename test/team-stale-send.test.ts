import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../main/simulator/server.ts';
import { postgresAvailable } from './helpers/postgres.ts';
import { runStudio, startStudio, whenStopped } from './helpers/processes.ts';
import { storeKinds } from './helpers/stores.ts';
import { teamOn } from './helpers/team.ts';

/**
 * A worker stopped (SIGSTOP: a suspended process, a machine asleep) between its boundary mark and the send, for
 * longer than its lease, on a team database: another machine parks the row as unknown, nothing having been sent, and
 * the person resubmits it, which is then paid. The worker that wakes must not send its own attempt after all.
 */

const LEASE_MS = 2_000;
const SETTINGS = { engine: { leaseMs: LEASE_MS, tickMs: 100, poll: { intervalMs: 100, maxIntervalMs: 200 } } };
const postgres = storeKinds().find((k) => k.kind === 'postgres')!;

let sim: RunningSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function until(check: () => Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not ${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(!postgresAvailable)('a worker that wakes after its lease ran out, between its mark and the send', () => {
  it('does not send: the step resubmitted meanwhile on another machine is paid once', async () => {
    sim = await startSimulator({ jobMs: 300 });
    const { store, machine } = await teamOn(postgres, { STUDIO_SIMULATOR_BASE_URL: sim.url });
    const [a, b] = [machine('machine-a', SETTINGS), machine('machine-b', SETTINGS)];
    const project = await store.projects.ensure('Stalled', Date.now());
    const { id } = await store.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt: 'once' } }, Date.now());

    const sleeper = startStudio(a.dataDir, ['worker', '--until-idle'], { ...a.env, STUDIO_STOP_AT: 'after-mark' });
    await sleeper.waitFor(new RegExp(`stopped at after-mark for task ${id}`));
    await whenStopped(sleeper.child);
    const other = startStudio(b.dataDir, ['worker'], b.env);
    await until(async () => (await store.tasks.get(id))!.status === 'OUTCOME_UNKNOWN', 'parked by machine B');
    const resolved = await runStudio(b.dataDir, ['resolve', String(id), '--resubmit'], b.env);
    expect(resolved.code, resolved.stderr).toBe(0);
    await until(async () => (await store.tasks.get(id))!.status === 'SUCCEEDED', 'resubmitted and finished');

    sleeper.child.kill('SIGCONT');
    expect(await sleeper.exited).toBe(0);
    expect(sleeper.stderr()).toMatch(new RegExp(`task ${id}: lease lost before sending; stopping`));
    other.child.kill('SIGTERM');
    await other.exited;
    expect(sim.charges.map((c) => c.idempotencyKey)).toEqual([`studio-${store.databaseId}-task-${id}-attempt-2`]);
    expect((await store.tasks.get(id))!).toMatchObject({ status: 'SUCCEEDED', attempts: 2 });
  }, 90_000);
});
