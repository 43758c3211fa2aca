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
// Only the boundary write of a project with a budget takes the project's row first.
const PROJECT_LOCK = 'FROM projects WHERE id = (SELECT project_id FROM tasks WHERE id';
// The concurrency is the team's: A's row takes one of the two slots.
const SETTINGS = { engine: { tickMs: 100, leaseMs: 30_000, concurrency: { image: 2, clip: 0, speech: 0, render: 0 }, poll: { intervalMs: 100, maxIntervalMs: 200 } } };

describe.skipIf(!postgresAvailable)('a machine stalled in the middle of a boundary write of a project with a budget, on a team database', () => {
  it('holds no other machine back: another machine marks and sends a task of that project within a second', async () => {
    const sim = await simulatorForTest({ jobMs: 200 });
    const { store, where, machine } = await teamOn(postgres, { STUDIO_SIMULATOR_BASE_URL: sim.url });
    const [a, b] = [machine('machine-a', SETTINGS), machine('machine-b', SETTINGS)];
    const project = await store.projects.ensure('Budgeted', Date.now());
    await store.projects.setBudget(project.id, 1_000_000_000);
    const image = (prompt: string) => ({ projectId: project.id, kind: 'image' as const, provider: 'simulator', model: 'sim-image-1', input: { prompt } });

    // Machine A reaches the team database through a link that goes silent both ways (no FIN, no RST) once A has sent
    // its boundary write's hold on the project: the server got all of it, A hears nothing back; then A is stopped.
    const database = new URL(where);
    const proxy = await startTcpProxy({ host: database.hostname, port: Number(database.port) });
    onTestFinished(() => proxy.close());
    const behind = new URL(where);
    behind.port = String(proxy.port);
    const first = await store.tasks.enqueue(image('a fox'), Date.now());
    const stalled = proxy.silentAfterRun(PROJECT_LOCK);
    const stopped = startStudio(a.dataDir, ['worker'], { ...a.env, STUDIO_DATABASE_URL: behind.toString() });
    onTestFinished(() => void stopped.child.kill('SIGKILL'));
    await stalled;
    stopped.child.kill('SIGSTOP');
    await whenStopped(stopped.child);

    const other = startStudio(b.dataDir, ['worker'], b.env);
    onTestFinished(() => void other.child.kill('SIGKILL'));
    await other.waitFor(/worker: started as/);
    await until(async () => (await queryRows(where, `SELECT 1 FROM lease_owners WHERE hostname = 'machine-b'`)).length === 1);
    const enqueuedAt = Date.now();
    const second = await store.tasks.enqueue(image('a hare'), enqueuedAt);
    await until(async () => (await store.tasks.get(second.id))!.submitStartedAt !== null, 20_000);
    // Timed by the mark itself (the database's clock, this computer's), not by when this test looked.
    expect((await store.tasks.get(second.id))!.submitStartedAt! - enqueuedAt).toBeLessThan(1_000);

    await until(async () => (await store.tasks.get(second.id))!.status === 'SUCCEEDED', 20_000);
    expect(chargesOf(sim, second.id)).toHaveLength(1);
    // A's own task was never sent: A stopped before it heard its boundary write.
    expect(chargesOf(sim, first.id)).toHaveLength(0);
    other.child.kill('SIGTERM');
    await other.exited;
  }, 60_000);
});
