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
    // sent its first claim: the server gets every byte of it, and A hears nothing back; then A is stopped outright.
    const database = new URL(where);
    const proxy = await startTcpProxy({ host: database.hostname, port: Number(database.port) });
    onTestFinished(() => proxy.close());
    const behind = new URL(where);
    behind.port = String(proxy.port);
    const stalled = proxy.silentAfter('studio.task.claim', QUERY_END);
    const stopped = startStudio(a.dataDir, ['worker'], { ...a.env, STUDIO_DATABASE_URL: behind.toString() });
    const { serverPort } = await stalled;
    stopped.child.kill('SIGSTOP');
    await whenStopped(stopped.child);
    // On a loaded computer the server may read and run A's claim well after the proxy handed it on; a claim still
    // running when the task below is enqueued rightly takes it, for A's whole lease. The stall under test is A's
    // claim having run on the server, A never hearing of it: so the task is enqueued once the server is done with it.
    await until(
      async () =>
        (
          await queryRows(where, `SELECT 1 FROM pg_stat_activity WHERE client_port = $1 AND state = 'idle' AND query LIKE '%studio.task.claim%'`, [
            serverPort,
          ])
        ).length === 1,
    );

    const enqueuedAt = Date.now();
    const task = await store.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt: 'a fox' } }, enqueuedAt);
    // Timed from the claim's event, not from when this process happened to look: a busy computer may delay a look
    // past the whole run, which ends the lease. The event's time is the claimer's reading of the database's clock as
    // it sent the claim; with the offset it measured added back, it is on this computer's clock, which both share.
    const claims = () =>
      queryRows<{ owner: string; at: string; offset: string }>(
        where,
        `SELECT e.detail_json::json->>'owner' AS owner, e.at, o.clock_offset_ms AS offset
           FROM task_events e JOIN lease_owners o ON o.id = e.detail_json::json->>'owner'
          WHERE e.task_id = $1 AND e.reason = 'claimed'`,
        [task.id],
      );
    await until(async () => (await claims()).length > 0);
    const [claim, ...more] = await claims();
    expect(claim!.owner).toMatch(/^machine-b:/);
    expect(more).toEqual([]);
    expect(Number(claim!.at) + Number(claim!.offset) - enqueuedAt).toBeLessThan(1_000);

    await until(async () => (await store.tasks.get(task.id))!.status === 'SUCCEEDED', 20_000);
    expect(await claims()).toHaveLength(1);
    expect(chargesOf(sim, task.id)).toHaveLength(1);
    stopped.child.kill('SIGKILL');
    other.child.kill('SIGTERM');
    await other.exited;
  }, 60_000);
});
