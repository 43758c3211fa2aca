import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../main/simulator/server.ts';
import { chargesOf } from './helpers/charges.ts';
import { postgresAvailable } from './helpers/postgres.ts';
import { runStudio, startStudio } from './helpers/processes.ts';
import { storeKinds } from './helpers/stores.ts';
import { startTcpProxy, type TcpProxy } from './helpers/tcpProxy.ts';
import { teamOn } from './helpers/team.ts';

/**
 * Machine A's boundary write commits, then its link to the team database goes silent (no FIN, no RST) before the
 * answer arrives, for longer than the lease. Machine B parks the row as unknown, a person resubmits it on B and B
 * buys it. When A's link heals, A hears its mark's answer: the time it waited for it counted against its lease, so
 * A must ask again before sending, and the row is no longer at A's attempt. The step is paid once, by B.
 */

const LEASE_MS = 2_000;
const SETTINGS = { engine: { leaseMs: LEASE_MS, tickMs: 100, poll: { intervalMs: 100, maxIntervalMs: 200 } } };
const SYNC = Buffer.from([0x53, 0, 0, 0, 4]);
const postgres = storeKinds().find((k) => k.kind === 'postgres')!;

let sim: RunningSimulator | undefined;
let proxy: TcpProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  await sim?.close();
  sim = proxy = undefined;
});

async function until(check: () => Promise<boolean> | boolean, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not ${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(!postgresAvailable)('a machine whose link to the team database goes silent right after its boundary write', () => {
  it('does not send that attempt once the link heals: the step a person resubmitted on another machine is paid once', async () => {
    sim = await startSimulator({ jobMs: 300 });
    const { store, machine, where } = await teamOn(postgres, { STUDIO_SIMULATOR_BASE_URL: sim.url });
    const [a, b] = [machine('machine-a', SETTINGS), machine('machine-b', SETTINGS)];
    const direct = new URL(where);
    proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port) });
    const viaProxy = new URL(where);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    const project = await store.projects.ensure('Cut off', Date.now());
    const { id } = await store.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt: 'once' } }, Date.now());

    // The boundary write's parameters carry its event's reason; the link goes silent once the Sync message that
    // ends the statement ('S', length 4, in PostgreSQL's frontend/backend protocol) has left after them.
    const cut = proxy.silentAfter('submit started', SYNC);
    const cutOff = startStudio(a.dataDir, ['worker', '--until-idle'], { ...a.env, STUDIO_DATABASE_URL: viaProxy.toString() });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`machine A made no boundary write:\n${cutOff.stderr()}`)), 30_000)));
    await Promise.race([cut, late]).finally(() => clearTimeout(timer));
    await until(async () => (await store.tasks.get(id))!.submitStartedAt !== null, 'marked by machine A');

    const other = startStudio(b.dataDir, ['worker'], b.env);
    await until(async () => (await store.tasks.get(id))!.status === 'OUTCOME_UNKNOWN', 'parked by machine B');
    const resolved = await runStudio(b.dataDir, ['resolve', String(id), '--resubmit'], b.env);
    expect(resolved.code, resolved.stderr).toBe(0);
    await until(async () => (await store.tasks.get(id))!.status === 'SUCCEEDED', 'resubmitted and bought by machine B');
    expect(chargesOf(sim, id)).toHaveLength(1);

    proxy.heal();
    const attempt1 = `studio-${store.databaseId}-task-${id}-attempt-1`;
    await until(
      () => /lease lost before sending/.test(cutOff.stderr()) || sim!.charges.some((c) => c.idempotencyKey === attempt1),
      'heard from machine A after the link healed',
    );
    other.child.kill('SIGTERM');
    cutOff.child.kill('SIGTERM');
    await Promise.all([other.exited, cutOff.exited]);

    expect(chargesOf(sim, id).map((c) => c.idempotencyKey)).toEqual([`studio-${store.databaseId}-task-${id}-attempt-2`]);
    expect(cutOff.stderr()).toContain(`task ${id}: lease lost before sending; stopping`);
    expect(await store.tasks.get(id)).toMatchObject({ status: 'SUCCEEDED', attempts: 2, idempotencyKey: `studio-${store.databaseId}-task-${id}-attempt-2` });
  }, 120_000);
});
