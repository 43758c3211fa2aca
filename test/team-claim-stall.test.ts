import { describe, expect, it, onTestFinished } from 'vitest';
import { chargesOf } from './helpers/charges.ts';
import { postgresAvailable, queryRows } from './helpers/postgres.ts';
import { startStudio, whenStopped } from './helpers/processes.ts';
import { simulatorForTest } from './helpers/running.ts';
import { storeKinds } from './helpers/stores.ts';
import { startTcpProxy } from './helpers/tcpProxy.ts';
import { teamOn } from './helpers/team.ts';
import { until } from './helpers/wait.ts';

const postgres = storeKinds().find((k) => k.kind === 'postgres')!;
// The claim goes as one simple Query message, whose text ends with a zero byte (PostgreSQL's frontend/backend protocol).
const QUERY_END = Buffer.from([0]);
const SETTINGS = { engine: { tickMs: 100, leaseMs: 30_000, concurrency: { image: 2, clip: 0, speech: 0, render: 0 }, poll: { intervalMs: 100, maxIntervalMs: 200 } } };

describe.skipIf(!postgresAvailable)('a machine stalled in the middle of a claim, on a team database', () => {
  it('holds no other machine back: another machine claims new work within a second', async () => {
    const sim = await simulatorForTest({ jobMs: 200 });
    const { store, where, machine } = await teamOn(postgres, { STUDIO_SIMULATOR_BASE_URL: sim.url });
    const [a, b] = [machine('machine-a', SETTINGS), machine('machine-b', SETTINGS)];
    const project = await store.projects.ensure('Stall', Date.now());

    const other = startStudio(b.dataDir, ['worker'], b.env);
    await other.waitFor(/worker: started as/);
    await until(async () => (await queryRows(where, `SELECT 1 FROM lease_owners WHERE hostname = 'machine-b'`)).length === 1);

    // Machine A reaches the team database through a link that goes silent both ways (no FIN, no RST) once A has
    // sent its first claim: the server got every byte of it, and A hears nothing back; then A is stopped outright.
    const database = new URL(where);
    const proxy = await startTcpProxy({ host: database.hostname, port: Number(database.port) });
    onTestFinished(() => proxy.close());
    const behind = new URL(where);
    behind.port = String(proxy.port);
    const stalled = proxy.silentAfter('studio.task.claim', QUERY_END);
    const stopped = startStudio(a.dataDir, ['worker'], { ...a.env, STUDIO_DATABASE_URL: behind.toString() });
    await stalled;
    stopped.child.kill('SIGSTOP');
    await whenStopped(stopped.child);

    const enqueuedAt = Date.now();
    const task = await store.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt: 'a fox' } }, enqueuedAt);
    await until(async () => (await store.tasks.get(task.id))!.leaseOwner?.startsWith('machine-b:') ?? false);
    expect(Date.now() - enqueuedAt).toBeLessThan(1_000);

    await until(async () => (await store.tasks.get(task.id))!.status === 'SUCCEEDED', 20_000);
    expect(chargesOf(sim, task.id)).toHaveLength(1);
    stopped.child.kill('SIGKILL');
    other.child.kill('SIGTERM');
    await other.exited;
  }, 60_000);
});
