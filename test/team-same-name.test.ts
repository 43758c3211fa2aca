import { spawnSync } from 'node:child_process';
import { cpSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FAL_MODEL, falQueue, realMedia, type Ledger } from './fakes/providers.ts';
import { startFake } from './fakes/server.ts';
import { postgresAvailable, queryRows } from './helpers/postgres.ts';
import { runStudio, startStudio } from './helpers/processes.ts';
import { storeKinds } from './helpers/stores.ts';
import { teamOn } from './helpers/team.ts';
import { until } from './helpers/wait.ts';

const postgres = storeKinds().find((k) => k.kind === 'postgres')!;
const OTHER_COMPUTER = fileURLToPath(new URL('./helpers/otherComputerPid.mjs', import.meta.url));
const SETTINGS = { engine: { tickMs: 100, leaseMs: 60_000, concurrency: { image: 4, clip: 0, speech: 0, render: 0 }, poll: { intervalMs: 100, maxIntervalMs: 200 } } };
const SENDS = 4;

/** The pid of a process that has certainly ended. */
const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid!;

describe.skipIf(!postgresAvailable)('two computers of one name on a team database', () => {
  it("are told apart by the id in their data folders: the one starting leaves the other's live sends alone, each paid once", async () => {
    // fal's queue (fal.ai/docs/inference-api): the submit is queued and charged as it arrives, and answered 4 s later.
    const ledger: Ledger = { charged: [] };
    const fal = await startFake(falQueue(ledger, (await realMedia()).png, { submitDelayMs: 4_000, jobMs: 200 }));
    const { store, where, machine } = await teamOn(postgres, { STUDIO_FAL_BASE_URL: fal.url, FAL_KEY: 'fal-key-0123456789' });
    // Two data folders, two computers; both go by the name "studio", as two computers of one host name do.
    const named = (computer: string) => {
      const m = machine(computer, SETTINGS);
      return { ...m, env: { ...m.env, STUDIO_MACHINE_NAME: 'studio' } };
    };
    const [first, second] = [named('computer-1'), named('computer-2')];
    const project = await store.projects.ensure('Same name', Date.now());
    const ids: number[] = [];
    for (let i = 0; i < SENDS; i++) {
      ids.push((await store.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'fal', model: FAL_MODEL, input: { prompt: `fox ${i}` } }, Date.now())).id);
    }

    // The first computer's worker is alive, on its own computer, under a pid that no process of the second one has.
    const sending = startStudio(first.dataDir, ['worker'], { ...first.env, NODE_OPTIONS: `--import ${OTHER_COMPUTER}`, OTHER_COMPUTER_PID: String(deadPid()) });
    await until(() => ledger.charged.length === SENDS, 20_000);
    const inFlight = await store.tasks.list({ projectId: project.id });
    expect(inFlight.map((t) => [t.status, t.submitStartedAt !== null])).toEqual(ids.map(() => ['RUNNING', true]));

    // The second computer starts while those sends wait for their answers.
    const starting = startStudio(second.dataDir, ['worker'], second.env);
    await until(async () => (await queryRows(where, `SELECT 1 FROM lease_owners WHERE hostname = 'studio'`)).length === 2);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(starting.stderr()).not.toMatch(/stopped process/);

    await until(async () => (await store.tasks.list({ projectId: project.id })).every((t) => t.status === 'SUCCEEDED'), 30_000);
    for (const id of ids) {
      // Never parked as unknown, never taken over: the first computer's worker ran each from claim to result.
      const events = await store.tasks.events(id);
      expect(events.map((e) => e.toStatus)).not.toContain('OUTCOME_UNKNOWN');
      expect(events.filter((e) => e.reason === 'claimed')).toHaveLength(1);
    }
    expect(ledger.charged).toHaveLength(SENDS);
    expect(new Set((await store.tasks.list({ projectId: project.id })).map((t) => t.remoteRequestId))).toEqual(new Set(ledger.charged));

    const machines = await queryRows<{ machine_id: string }>(where, `SELECT DISTINCT machine_id FROM lease_owners WHERE hostname = 'studio'`);
    expect(machines).toHaveLength(2);
    for (const w of [sending, starting]) w.child.kill('SIGTERM');
    await Promise.all([sending.exited, starting.exited]);
  }, 90_000);

  it("started from a copy of another's data folder (one machine id), leaves that computer's live send alone: paid once", async () => {
    // fal's queue (fal.ai/docs/inference-api): the submit is queued and charged as it arrives, and answered 10 s later.
    const ledger: Ledger = { charged: [] };
    const fal = await startFake(falQueue(ledger, (await realMedia()).png, { submitDelayMs: 10_000, jobMs: 200 }));
    const { store, where, machine } = await teamOn(postgres, { STUDIO_FAL_BASE_URL: fal.url, FAL_KEY: 'fal-key-0123456789' });
    const old = machine('old-laptop', { engine: { ...SETTINGS.engine, concurrency: { ...SETTINGS.engine.concurrency, image: 1 } } });
    const copy = machine('new-laptop');
    const env = (m: typeof old) => ({ ...m.env, STUDIO_MACHINE_NAME: 'studio' });
    const project = await store.projects.ensure('Copied', Date.now());
    const { id } = await store.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'fal', model: FAL_MODEL, input: { prompt: 'a fox' } }, Date.now());

    // The old laptop's worker sends, alive on its own computer: another boot, a pid no process here has.
    const sending = startStudio(old.dataDir, ['worker'], { ...env(old), NODE_OPTIONS: `--import ${OTHER_COMPUTER}`, OTHER_COMPUTER_PID: String(deadPid()), STUDIO_BOOT_ID: 'the old laptop' });
    await until(() => ledger.charged.length === 1, 20_000);
    // The new laptop is set up from a copy of the old one's data folder, machine id and all, while that send waits.
    cpSync(old.dataDir, copy.dataDir, { recursive: true });
    const starting = startStudio(copy.dataDir, ['worker'], env(copy));
    await until(async () => (await queryRows(where, `SELECT 1 FROM lease_owners WHERE hostname = 'studio'`)).length === 2);
    await new Promise((r) => setTimeout(r, 1_000));
    // A row parked as unknown asks the person; told it needs a decision, they would send it again.
    if ((await store.tasks.get(id))!.status === 'OUTCOME_UNKNOWN') expect((await runStudio(copy.dataDir, ['resolve', String(id), '--resubmit'], env(copy))).code).toBe(0);

    await until(async () => (await store.tasks.get(id))!.status === 'SUCCEEDED', 30_000);
    expect(ledger.charged).toHaveLength(1);
    expect(starting.stderr()).not.toMatch(/stopped process/);
    const events = await store.tasks.events(id);
    expect(events.map((e) => e.toStatus)).not.toContain('OUTCOME_UNKNOWN');
    expect(events.filter((e) => e.reason === 'claimed')).toHaveLength(1);
    expect((await store.tasks.get(id))!.remoteRequestId).toBe(ledger.charged[0]);
    const machines = await queryRows<{ machine_id: string; boot_id: string }>(where, `SELECT DISTINCT machine_id, boot_id FROM lease_owners WHERE hostname = 'studio'`);
    expect(new Set(machines.map((m) => m.machine_id)).size).toBe(1);
    expect(machines).toHaveLength(2);
    for (const w of [sending, starting]) w.child.kill('SIGTERM');
    await Promise.all([sending.exited, starting.exited]);
  }, 90_000);
});
