import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { databasePath } from '../main/config/paths.ts';
import { resolveUnknown } from '../main/engine/decisions.ts';
import { settleReceipts } from '../main/engine/receiptReplay.ts';
import type { Receipt, TaskIdentity } from '../main/domain/ports.ts';
import type { RunningSimulator } from '../main/simulator/server.ts';
import type { Store } from '../main/store/port.ts';
import { openPostgresStore } from '../main/store/postgres/store.ts';
import { openSqliteStore } from '../main/store/sqlite/store.ts';
import { imageTask } from './helpers/engine.ts';
import { runStudio, startStudio, writeSettings } from './helpers/processes.ts';
import { openUnderTest } from './helpers/storeUnderTest.ts';
import { simulatorForTest } from './helpers/running.ts';
import { storeKinds, type StoreKind } from './helpers/stores.ts';
import { identityOf, receiptOf } from './helpers/receipts.ts';
import { tempDir } from './helpers/tmp.ts';

/**
 * Receipts belong to one database. Task ids are numbered per database, so task 1 of a team database and task 1 of
 * the embedded studio are two steps; a receipt one of them journaled must never be applied to the other, whether
 * the two share a data folder (a team worker run beside the local studio) or a journal was copied from another
 * folder. Real worker processes, SIGKILLed at a named boundary, against the simulator over HTTP, which counts charges.
 */

const SETTINGS = { engine: { tickMs: 100, poll: { intervalMs: 100, maxIntervalMs: 200 }, lookup: { intervalMs: 100, tries: 1 } } };
const postgres = storeKinds().find((k) => k.kind === 'postgres')!;

interface Studio {
  dataDir: string;
  env: Record<string, string>;
  store: Store;
}

async function studioOn(kind: StoreKind['kind'], sim: RunningSimulator, dataDir = tempDir()): Promise<Studio> {
  writeSettings(dataDir, SETTINGS);
  const env = { STUDIO_SIMULATOR_BASE_URL: sim.url };
  if (kind === 'sqlite') return { dataDir, env, store: openSqliteStore(databasePath(dataDir)) };
  const url = await postgres.fresh();
  return { dataDir, env: { ...env, STUDIO_DATABASE_URL: url, STUDIO_MEDIA_DIR: tempDir() }, store: await openPostgresStore(url) };
}

async function enqueue(s: Studio, prompt: string): Promise<number> {
  const project = await s.store.projects.ensure('Receipts', Date.now());
  return (await s.store.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt } }, Date.now())).id;
}

/** A worker of `s` SIGKILLed when it reaches `point` for task `id`. */
async function killedAt(s: Studio, point: string, id: number): Promise<void> {
  const doomed = startStudio(s.dataDir, ['worker'], { ...s.env, STUDIO_STOP_AT: point });
  await doomed.waitFor(new RegExp(`stopped at ${point} for task ${id}\\b`));
  doomed.child.kill('SIGKILL');
  await doomed.exited;
}

async function run(s: Studio, args: string[]) {
  const done = await runStudio(s.dataDir, args, s.env);
  return { ...done, said: `${done.stdout}${done.stderr}` };
}

/** Every journal file under `dir`, at any depth; settled receipts, moved to a journal's archive, are not in one. */
function journals(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'settled') return [];
    return statSync(path).isDirectory() ? journals(path) : name.endsWith('.jsonl') ? [path] : [];
  });
}

/** Parked as an unknown outcome: its send started, and its worker died before anything left. */
async function unknownOutcome(s: Studio, id: number): Promise<void> {
  await killedAt(s, 'after-mark', id);
  const worker = await run(s, ['worker', '--until-idle']);
  expect(worker.code, worker.said).toBe(0);
  expect(await s.store.tasks.get(id)).toMatchObject({ status: 'OUTCOME_UNKNOWN', remoteRequestId: null });
}

/** Its request id reached the receipt journal, not the row: the worker died right after the send. */
async function journaledOnly(s: Studio, sim: RunningSimulator, id: number): Promise<string> {
  await killedAt(s, 'after-send', id);
  expect(sim.charges).toHaveLength(1);
  const requestId = sim.charges[0]!.requestId;
  expect(await s.store.tasks.get(id)).toMatchObject({ status: 'RUNNING', remoteRequestId: null });
  expect(journals(join(s.dataDir, 'receipts')).some((f) => readFileSync(f, 'utf8').includes(requestId))).toBe(true);
  return requestId;
}

/** The other studio's task is left as it was, and its own request is collected by its own studio, charged once. */
async function neverApplied(victim: Studio, owner: Studio, sim: RunningSimulator, requestId: string): Promise<void> {
  expect(await victim.store.tasks.get(1)).toMatchObject({ status: 'OUTCOME_UNKNOWN', remoteRequestId: null, outputPath: null });
  expect(await victim.store.tasks.outputs(1)).toEqual([]);

  const worker = await run(owner, ['worker', '--until-idle']);
  expect(worker.code, worker.said).toBe(0);
  expect(await owner.store.tasks.get(1)).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: requestId });
  expect(sim.charges.map((c) => c.requestId)).toEqual([requestId]);
  expect(await victim.store.tasks.get(1)).toMatchObject({ status: 'OUTCOME_UNKNOWN', remoteRequestId: null });
}

describe.skipIf(!postgres.available)('a team worker and the local studio sharing one data folder', () => {
  it("a reconcile of the local studio never applies the team worker's receipt: local task 1 collects no other prompt's image", async () => {
    const sim = await simulatorForTest({ jobMs: 200 });
    const local = await studioOn('sqlite', sim);
    const team = await studioOn('postgres', sim, local.dataDir);
    expect([await enqueue(local, 'a red fox in snow'), await enqueue(team, 'a lighthouse at dusk')]).toEqual([1, 1]);

    await unknownOutcome(local, 1);
    const teamRequest = await journaledOnly(team, sim, 1);

    const reconcile = await run(local, ['reconcile', '1']);
    expect(reconcile.code, reconcile.said).toBe(0);
    expect(reconcile.said).not.toContain(teamRequest);
    const worker = await run(local, ['worker', '--until-idle']);
    expect(worker.code, worker.said).toBe(0);
    await neverApplied(local, team, sim, teamRequest);
  });
});

describe.each(storeKinds())('on the $kind store, a receipt journal copied from another data folder', (kind) => {
  it.skipIf(!kind.available)('is never applied, and left in place', async () => {
    const sim = await simulatorForTest({ jobMs: 200 });
    const here = await studioOn(kind.kind, sim);
    const there = await studioOn(kind.kind, sim);
    expect([await enqueue(here, 'a red fox in snow'), await enqueue(there, 'a lighthouse at dusk')]).toEqual([1, 1]);

    await unknownOutcome(here, 1);
    const thereRequest = await journaledOnly(there, sim, 1);
    // Copied as a person copies a folder: the whole receipts folder, and each journal loose into it as well.
    const from = join(there.dataDir, 'receipts');
    const into = join(here.dataDir, 'receipts');
    cpSync(from, into, { recursive: true });
    for (const file of journals(from)) copyFileSync(file, join(into, basename(file)));
    const copies = journals(into);
    expect(copies.length).toBeGreaterThan(0);

    const reconcile = await run(here, ['reconcile', '1']);
    expect(reconcile.code, reconcile.said).toBe(0);
    const worker = await run(here, ['worker', '--until-idle']);
    expect(worker.code, worker.said).toBe(0);
    expect(copies.filter((c) => !existsSync(c))).toEqual([]);
    await neverApplied(here, there, sim, thereRequest);
  });
});

describe.each(storeKinds())('on the $kind store, a receipt', (kind) => {
  it.skipIf(!kind.available)('of another database is never applied nor settled; one of a journal that named no database only on the very attempt it names, sent before it was heard', async () => {
    const { store, repo, projectId, clock, as } = await openUnderTest(kind);
    const later = Math.max(Date.now(), clock.now()) + 86_400_000;
    const marked = async (prompt: string) => {
      const { id } = await repo.enqueue(imageTask(projectId, prompt), clock.now());
      await repo.claim('image', 4, 60_000, as('a'));
      await repo.markSubmitStarted(id, 'studio-task-1-attempt-1', 60_000, as('a'));
      await repo.parkUnknown(id, 'lost', as('a'));
      return id;
    };
    const identities = new Map<number, TaskIdentity>();
    const receipt = (taskId: number, database: string | null, at: number) => ({
      database,
      taskId,
      task: database === null ? null : identities.get(taskId)!,
      idempotencyKey: 'studio-task-1-attempt-1',
      requestId: `req-${taskId}-${at}`,
      handle: null,
      at,
    });

    const id = await marked('a fox');
    identities.set(id, await identityOf(repo, id));
    const other = receipt(id, 'b'.repeat(32), later);
    expect(await repo.applyReceipt(other, true, clock.now())).toBeUndefined();
    expect(await repo.receiptSettled(other)).toBe(false);
    // Heard before this row's send started: another database's request under the same old key.
    const before = receipt(id, null, 1);
    expect(await repo.applyReceipt(before, true, clock.now())).toBeUndefined();
    expect(await repo.receiptSettled(before)).toBe(false);
    const own = receipt(id, null, later);
    expect(await repo.applyReceipt(own, true, clock.now())).toMatchObject({ status: 'SUBMITTED', remoteRequestId: own.requestId });
    expect(await repo.receiptSettled(own)).toBe(true);

    // A row that moved on to another attempt: an unnamed receipt of its earlier one is no proof; nothing is collected.
    const moved = await marked('a hare');
    identities.set(moved, await identityOf(repo, moved));
    await resolveUnknown(repo, moved, { resubmit: true }, clock.now());
    const tasks = (await repo.list()).length;
    expect(await repo.applyReceipt(receipt(moved, null, later), true, clock.now())).toBeUndefined();
    expect(await repo.receiptSettled(receipt(moved, null, later))).toBe(false);
    expect(await repo.list()).toHaveLength(tasks);
    // The same receipt naming this database is collected (by a sibling task: the row's own attempt is not marked).
    expect(await repo.applyReceipt(receipt(moved, store.databaseId, later), true, clock.now())).toMatchObject({ status: 'SUBMITTED' });
  });
});

describe.each(storeKinds())('on the $kind store, a receipt of this database', (kind) => {
  it.skipIf(!kind.available)('for an attempt the row has not reached (a restored backup) is applied, and one of another task under the same id never is', async () => {
    const { store, repo, projectId, clock } = await openUnderTest(kind);
    const key = `studio-${store.databaseId}-task-1-attempt-1`;
    const pending = (await repo.enqueue(imageTask(projectId, 'a fox'), clock.now())).id;
    const sent = { ...(await receiptOf(repo, store.databaseId, pending, key, 'req-restored')), at: clock.now() };
    // The same id in a copied folder or a restored backup, holding another step.
    const stranger = { ...sent, requestId: 'req-stranger', task: { inputHash: 'another step', createdAt: 1 } };
    expect(await repo.receiptSettled(stranger)).toBe(false);
    expect(await repo.applyReceipt(stranger, true, clock.now())).toBeUndefined();
    expect(await repo.get(pending)).toMatchObject({ status: 'PENDING', remoteRequestId: null, attempts: 0 });

    expect(await repo.receiptSettled(sent)).toBe(false);
    expect(await repo.applyReceipt(sent, true, clock.now())).toMatchObject({ status: 'SUBMITTED', charged: 'yes', attempts: 1, idempotencyKey: key, remoteRequestId: 'req-restored' });
    expect(await repo.receiptSettled(sent)).toBe(true);
    expect(await repo.receiptSettled(stranger)).toBe(false);
    // A task this database does not hold (a backup older than the task): its receipt is kept.
    expect(await repo.receiptSettled({ ...sent, taskId: 999 })).toBe(false);
  });
});

function journalsWith(dir: string, requestId: string): string[] {
  return journals(join(dir, 'receipts')).filter((f) => readFileSync(f, 'utf8').includes(requestId));
}

describe('a database restored from a backup older than its receipt journal', () => {
  it('takes the request its task had sent and collects it: charged once, the journal kept until then', async () => {
    const sim = await simulatorForTest({ jobMs: 200 });
    const s = await studioOn('sqlite', sim);
    const id = await enqueue(s, 'a red fox in snow');
    await s.store.close();
    const db = databasePath(s.dataDir);
    copyFileSync(db, `${db}.bak`);
    await killedAt(s, 'after-send', id);
    const [sent] = sim.charges.map((c) => c.requestId);
    for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true });
    copyFileSync(`${db}.bak`, db);

    const worker = await run(s, ['worker', '--until-idle']);
    expect(worker.code, worker.said).toBe(0);
    const store = openSqliteStore(db);
    expect(await store.tasks.get(id)).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: sent, charged: 'yes', attempts: 1 });
    await store.close();
    expect(sim.charges.map((c) => c.requestId)).toEqual([sent]);
  });

  it("never gives a new task that reuses an id the request of the step the journal names under it", async () => {
    const sim = await simulatorForTest({ jobMs: 200 });
    const s = await studioOn('sqlite', sim);
    await enqueue(s, 'task one');
    expect((await run(s, ['worker', '--until-idle'])).code).toBe(0);
    const db = databasePath(s.dataDir);
    await s.store.close();
    copyFileSync(db, `${db}.bak`);
    s.store = openSqliteStore(db);
    const old = await enqueue(s, 'a lighthouse at dusk');
    await s.store.close();
    await killedAt(s, 'after-send', old);
    const oldRequest = sim.charges.at(-1)!.requestId;
    // The folder moved to another machine: the journal's writer is of another host, so it is never taken for gone.
    for (const f of journals(join(s.dataDir, 'receipts'))) renameSync(f, join(dirname(f), basename(f).replace(/^[^-]+/, 'old-laptop')));
    for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true });
    copyFileSync(`${db}.bak`, db);
    expect((await run(s, ['worker', '--until-idle'])).code).toBe(0);

    s.store = openSqliteStore(db);
    const reused = await enqueue(s, 'a red fox in snow');
    expect(reused).toBe(old);
    await s.store.close();
    await killedAt(s, 'after-mark', reused);
    expect((await run(s, ['worker', '--until-idle'])).code).toBe(0);
    s.store = openSqliteStore(db);
    const task = await s.store.tasks.get(reused);
    expect(task?.remoteRequestId).not.toBe(oldRequest);
    expect(await s.store.tasks.outputs(reused)).toEqual([]);
    expect(journalsWith(s.dataDir, oldRequest)).toHaveLength(1);
    await s.store.close();
  });
});

describe('a copied data folder', () => {
  it("never applies the copy's receipt to the original's task of the same id", async () => {
    const sim = await simulatorForTest({ jobMs: 200 });
    const a = await studioOn('sqlite', sim);
    await enqueue(a, 'task one');
    expect((await run(a, ['worker', '--until-idle'])).code).toBe(0);
    await a.store.close();
    const copy = tempDir();
    cpSync(a.dataDir, copy, { recursive: true });
    a.store = openSqliteStore(databasePath(a.dataDir));
    const b = await studioOn('sqlite', sim, copy);
    const [ta, tb] = [await enqueue(a, 'a red fox in snow'), await enqueue(b, 'a lighthouse at dusk')];
    expect(ta).toBe(tb);
    await unknownOutcome(a, ta);
    await killedAt(b, 'after-send', tb);
    const bRequest = sim.charges.at(-1)!.requestId;
    // The copy drew an id of its own at its first opening; its journal is put in the original's own folder all the same.
    expect(b.store.databaseId).not.toBe(a.store.databaseId);
    for (const f of journals(join(b.dataDir, 'receipts'))) copyFileSync(f, join(a.dataDir, 'receipts', a.store.databaseId, basename(f)));

    const reconcile = await run(a, ['reconcile', String(ta), '--json']);
    expect(reconcile.code, reconcile.said).toBe(0);
    expect(reconcile.stdout).not.toContain(bRequest);
    expect((await run(a, ['worker', '--until-idle'])).code).toBe(0);
    expect(await a.store.tasks.get(ta)).toMatchObject({ status: 'OUTCOME_UNKNOWN', remoteRequestId: null });
    expect(journalsWith(a.dataDir, bRequest)).toHaveLength(1);
    expect((await run(b, ['worker', '--until-idle'])).code).toBe(0);
    expect(await b.store.tasks.get(tb)).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: bRequest });
  });
});

describe.each(storeKinds())('on the $kind store, receipts of journals that named no database', (kind) => {
  it.skipIf(!kind.available)('that give one attempt two requests apply neither; reconcile offers both', async () => {
    const sim = await simulatorForTest({ jobMs: 200 });
    const s = await studioOn(kind.kind, sim);
    const id = await enqueue(s, 'a red fox in snow');
    const key = `studio-task-${id}-attempt-1`;
    const lease = { owner: 'gone-worker', now: Date.now() };
    await s.store.tasks.claim('image', 4, 60_000, lease);
    await s.store.tasks.markSubmitStarted(id, key, 60_000, lease);
    await s.store.tasks.parkUnknown(id, 'its worker stopped', lease);
    const later = Date.now() + 60_000;
    const unnamed = (requestId: string) => `${JSON.stringify({ taskId: id, idempotencyKey: key, requestId, handle: null, at: later })}\n`;
    mkdirSync(join(s.dataDir, 'receipts'), { recursive: true });
    writeFileSync(join(s.dataDir, 'receipts', 'old-999991-aaaaaaaa.jsonl'), unnamed('req-mine'));
    writeFileSync(join(s.dataDir, 'receipts', 'old-999992-bbbbbbbb.jsonl'), unnamed('req-theirs'));

    const reconcile = await run(s, ['reconcile', String(id), '--json']);
    expect(reconcile.code, reconcile.said).toBe(0);
    const offered = (JSON.parse(reconcile.stdout) as { candidates: { requestId: string }[] }).candidates.map((c) => c.requestId);
    expect(offered).toEqual(expect.arrayContaining(['req-mine', 'req-theirs']));
    expect((await run(s, ['worker', '--until-idle'])).code).toBe(0);
    expect(await s.store.tasks.get(id)).toMatchObject({ status: 'OUTCOME_UNKNOWN', remoteRequestId: null });
    expect(journals(join(s.dataDir, 'receipts'))).toHaveLength(2);
    expect(sim.charges).toEqual([]);
  });
});

describe('settling the journal', () => {
  it('asks the table about each request of an attempt: a rival, or another step under the same id, is never dropped with the one the row holds', async () => {
    const unnamed = { database: null, task: null, taskId: 1, idempotencyKey: 'studio-task-1-attempt-1', handle: null, at: 1 };
    const mine = { ...unnamed, requestId: 'req-mine' };
    const theirs = { ...unnamed, requestId: 'req-theirs' };
    const named = { ...mine, database: 'd'.repeat(32), task: { inputHash: 'a fox', createdAt: 1 } };
    const stranger = { ...named, requestId: 'req-stranger', task: { inputHash: 'a hare', createdAt: 2 } };
    let dropped: Receipt[] = [];
    const log = {
      append: () => {},
      all: () => [mine, theirs, named, stranger],
      settle: (isSettled: (r: Receipt) => boolean) => {
        dropped = [mine, theirs, named, stranger].filter(isSettled);
      },
      archived: () => [],
    };
    await settleReceipts({ receiptSettled: async (r) => r === mine || r === named }, log);
    expect(dropped).toEqual([mine, named]);
  });
});
