import { describe, expect, it, onTestFinished } from 'vitest';
import { startSimulator } from '../main/simulator/server.ts';
import { initTeamDatabase } from '../main/store/postgres/migrator.ts';
import { startCluster } from './helpers/pgCluster.ts';
import { postgresAvailable, queryRows } from './helpers/postgres.ts';
import { runStudio, startStudio, writeSettings } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';
import { until } from './helpers/wait.ts';

/**
 * The team database's server stopped and started again under a running worker process: a cluster of this test's
 * own, so the run's shared one is never stopped. The provider finishes the job while the database is down.
 */
describe.skipIf(!postgresAvailable)('a team database that goes away while a worker runs', () => {
  it('pauses the engine saying why, resumes by itself when the server is back, and finishes the task, charged once', async () => {
    const cluster = await startCluster();
    onTestFinished(() => cluster.stop());
    await queryRows(cluster.url(), 'CREATE DATABASE studio');
    const url = cluster.url('studio');
    await initTeamDatabase(url);
    const sim = await startSimulator({ jobMs: 4_000 });
    onTestFinished(() => sim.close());
    const dataDir = tempDir();
    writeSettings(dataDir, {
      engine: { leaseMs: 60_000, tickMs: 100, poll: { intervalMs: 200, maxIntervalMs: 400 } },
      providers: { simulator: { baseUrl: sim.url } },
      team: { machineName: 'studio-a' },
    });
    const enqueued = await runStudio(dataDir, ['--db', url, 'enqueue', '--project', 'Film', '--kind', 'image', '--provider', 'simulator', '--model', 'sim-image-1', '--input', '{"prompt":"a fox"}']);
    expect(enqueued.code, enqueued.stderr).toBe(0);
    const id = Number(enqueued.stdout.trim());

    const worker = startStudio(dataDir, ['--db', url, 'worker', '--until-idle']);
    await worker.waitFor(/started as studio-a:\d+:\w+ on the team database at postgres:\/\/studio@127\.0\.0\.1:\d+\/studio/);
    await until(async () => (await queryRows<{ status: string }>(url, 'SELECT status FROM tasks WHERE id = $1', [id]))[0]?.status === 'SUBMITTED', 20_000);

    await cluster.stopServer();
    await worker.waitFor(/engine paused: the team database at postgres:\/\/studio@127\.0\.0\.1:\d+\/studio cannot be reached[^\n]*; retrying/, 20_000);
    // The job ends at the provider meanwhile; the worker keeps its result and keeps trying.
    await new Promise((r) => setTimeout(r, 5_000));
    expect(worker.child.exitCode).toBeNull();
    await cluster.startServer();

    expect(await worker.exited, worker.stderr()).toBe(0);
    expect(worker.stderr()).toMatch(/engine resumed/);
    expect(worker.stderr()).not.toMatch(/engine error|Unhandled|at .*\.ts:\d+/);
    const [task] = await queryRows<{ status: string; charged: string }>(url, 'SELECT status, charged FROM tasks WHERE id = $1', [id]);
    expect(task).toMatchObject({ status: 'SUCCEEDED', charged: 'yes' });
    expect(await queryRows(url, 'SELECT machine FROM task_outputs WHERE task_id = $1', [id])).toEqual([{ machine: 'studio-a' }]);
    expect(sim.charges.filter((c) => c.idempotencyKey?.endsWith(`-task-${id}-attempt-1`))).toHaveLength(1);
  }, 120_000);
});
