import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ReceiptJournal, SETTLED_KEPT_MS } from '../main/adapters/receiptJournal.ts';
import { databasePath } from '../main/config/paths.ts';
import { replayReceipts } from '../main/engine/receiptReplay.ts';
import { reconcile } from '../main/engine/reconciler.ts';
import type { InputFiles } from '../main/engine/outputLocator.ts';
import type { Receipt } from '../main/domain/ports.ts';
import type { Store } from '../main/store/port.ts';
import { openSqliteStore } from '../main/store/sqlite/store.ts';
import { imageTask } from './helpers/engine.ts';
import { receiptOf } from './helpers/receipts.ts';
import { runStudio, writeSettings } from './helpers/processes.ts';
import { simulatorForTest } from './helpers/running.ts';
import { openUnderTest } from './helpers/storeUnderTest.ts';
import { storeKinds } from './helpers/stores.ts';
import { tempDir } from './helpers/tmp.ts';

/**
 * A journaled request is paid for, so its receipt is settled only once a task holds it or a row's history notes it.
 * A restored database can be behind its journal in ways the table alone does not show: a team database restored while
 * another worker sent the same attempt again, a row behind two journaled attempts read in any order, a receipt naming
 * another task's request by its other name.
 */

const LEASE = 60_000;
const keyOf = (store: Store, id: number, attempt: number) => `studio-${store.databaseId}-task-${id}-attempt-${attempt}`;

/** A journal file of a writer that is gone, as a worker killed on this machine leaves it. */
function journalOfGoneWriter(dataDir: string, database: string, receipts: Receipt[]): string {
  const dir = join(dataDir, 'receipts', database);
  mkdirSync(dir, { recursive: true });
  const gone = spawnSync(process.execPath, ['-e', '']).pid;
  const path = join(dir, `${hostname().replace(/[^\w.-]/g, '_')}-${gone}-0123abcd.jsonl`);
  writeFileSync(path, receipts.map((r) => `${JSON.stringify(r)}\n`).join(''));
  return path;
}

describe.each(storeKinds())('on the $kind store', (kind) => {
  it.skipIf(!kind.available)('a receipt of the attempt a row holds another request for (sent twice, the database restored between) is collected or noted, never settled unheld', async () => {
    const { store, repo, projectId, clock, as } = await openUnderTest(kind);
    const sentTwice = async (prompt: string) => {
      const { id } = await repo.enqueue(imageTask(projectId, prompt), clock.now());
      const key = keyOf(store, id, 1);
      await repo.claim('image', 4, LEASE, as('worker-y'));
      await repo.markSubmitStarted(id, key, LEASE, as('worker-y'));
      await repo.recordSubmitted(id, { requestId: `req-y-${id}`, handle: null }, null, { ...as('worker-y'), attempt: key });
      // Worker x sent this attempt before the restore; its receipt is the only record of that paid request.
      return { id, x: { ...(await receiptOf(repo, store.databaseId, id, key, `req-x-${id}`)), at: clock.now() } };
    };

    const polled = await sentTwice('a fox');
    expect(await repo.receiptSettled(polled.x)).toBe(false);
    const sibling = await repo.applyReceipt(polled.x, true, clock.now());
    expect(sibling).toMatchObject({ status: 'SUBMITTED', charged: 'yes', remoteRequestId: polled.x.requestId, idempotencyKey: polled.x.idempotencyKey });
    expect(await repo.get(polled.id)).toMatchObject({ status: 'SUBMITTED', remoteRequestId: `req-y-${polled.id}` });
    expect((await repo.events(polled.id)).at(-1)!.reason).toBe(
      `another request of its attempt 1, sent before this database was restored from an older backup and paid for, is collected as task ${sibling!.id}`,
    );
    expect(await repo.receiptSettled(polled.x)).toBe(true);

    // Where the provider cannot be asked by id, the row's history keeps it.
    const kept = await sentTwice('a hare');
    expect(await repo.applyReceipt(kept.x, false, clock.now())).toBeUndefined();
    expect((await repo.events(kept.id)).at(-1)).toMatchObject({ detail: { requestId: kept.x.requestId } });
    expect(await repo.receiptSettled(kept.x)).toBe(true);
  });

  it.skipIf(!kind.available)("a receipt whose other name is another task's request id or other name is never applied", async () => {
    const { store, repo, projectId, clock, as } = await openUnderTest(kind);
    const holder = async (prompt: string, requestId: string, alias: string | null) => {
      const { id } = await repo.enqueue(imageTask(projectId, prompt), clock.now());
      await repo.claim('image', 4, LEASE, as('a'));
      await repo.markSubmitStarted(id, keyOf(store, id, 1), LEASE, as('a'));
      await repo.recordSubmitted(id, { requestId, handle: null, alias }, null, { ...as('a'), attempt: keyOf(store, id, 1) });
    };
    await holder('held by its id', 'H1', null);
    await holder('held by its other name', 'R0', 'H2');
    const { id } = await repo.enqueue(imageTask(projectId, 'a fox'), clock.now());
    await repo.claim('image', 4, LEASE, as('b'));
    await repo.markSubmitStarted(id, keyOf(store, id, 1), LEASE, as('b'));
    for (const alias of ['h1', 'H2']) {
      const receipt = { ...(await receiptOf(repo, store.databaseId, id, keyOf(store, id, 1), `R2-${alias}`)), alias, at: clock.now() };
      expect(await repo.applyReceipt(receipt, true, clock.now())).toBeUndefined();
      expect(await repo.get(id)).toMatchObject({ remoteRequestId: null });
    }
  });

  it.skipIf(!kind.available)('a row restored behind two journaled attempts takes the first and a sibling collects the second, whatever order the journal reads them in', async () => {
    const { store, repo, projectId, clock } = await openUnderTest(kind);
    const dataDir = tempDir();
    const ports = { repo, transaction: store.transaction.bind(store) };
    const behind = async (prompt: string) => {
      const { id } = await repo.enqueue(imageTask(projectId, prompt), clock.now());
      const sent = async (attempt: number) => ({ ...(await receiptOf(repo, store.databaseId, id, keyOf(store, id, attempt), `req-${id}-${attempt}`)), at: clock.now() });
      return { id, first: await sent(1), second: await sent(2) };
    };
    const holders = async (requestId: string) => (await repo.list()).filter((t) => t.remoteRequestId === requestId);

    // Read second first.
    const both = await behind('a fox');
    const journal = new ReceiptJournal(dataDir, store.databaseId);
    const file = journalOfGoneWriter(dataDir, store.databaseId, [both.second, both.first]);
    await replayReceipts(ports, journal, () => true, clock.now());
    expect(await repo.get(both.id)).toMatchObject({ status: 'SUBMITTED', remoteRequestId: both.first.requestId, attempts: 1 });
    const [sibling] = await holders(both.second.requestId);
    expect(sibling).toMatchObject({ status: 'SUBMITTED', charged: 'yes' });
    expect((await repo.events(both.id)).map((e) => e.reason)).toContain(
      `the request of its attempt 2, sent before this database was restored from an older backup and paid for, is collected as task ${sibling!.id}`,
    );
    expect(existsSync(file)).toBe(false);

    // The first heard only at a later start-up, after the row took the second.
    const late = await behind('a hare');
    writeFileSync(file, `${JSON.stringify(late.second)}\n`);
    await replayReceipts(ports, journal, () => true, clock.now());
    expect(await repo.get(late.id)).toMatchObject({ remoteRequestId: late.second.requestId, attempts: 2 });
    writeFileSync(file, `${JSON.stringify(late.first)}\n`);
    await replayReceipts(ports, journal, () => true, clock.now());
    expect(await holders(late.first.requestId)).toHaveLength(1);
    expect(existsSync(file)).toBe(false);
  });

  it.skipIf(!kind.available)("an unknown row restored behind a journaled later attempt: a sibling collects it, and reconcile names that task in words true for an attempt ahead", async () => {
    const { store, repo, projectId, clock, as } = await openUnderTest(kind);
    const { id } = await repo.enqueue(imageTask(projectId, 'a fox'), clock.now());
    await repo.claim('image', 4, LEASE, as('a'));
    await repo.markSubmitStarted(id, keyOf(store, id, 1), LEASE, as('a'));
    await repo.parkUnknown(id, 'lost', as('a'));
    // Attempt 2 was sent after a resubmit the backup does not hold.
    const ahead = { ...(await receiptOf(repo, store.databaseId, id, keyOf(store, id, 2), 'req-ahead')), at: clock.now() };
    const sibling = await repo.applyReceipt(ahead, true, clock.now());
    expect(sibling).toMatchObject({ status: 'SUBMITTED', remoteRequestId: 'req-ahead' });
    expect(await repo.get(id)).toMatchObject({ status: 'OUTCOME_UNKNOWN' });
    expect((await repo.events(id)).at(-1)!.reason).toBe(
      `the request of its attempt 2, sent before this database was restored from an older backup and paid for, is collected as task ${sibling!.id}`,
    );
    const found = await reconcile(repo, {} as InputFiles, undefined, id, clock.now());
    expect(found.collected).toEqual([{ requestId: 'req-ahead', taskId: sibling!.id }]);
  });

  it.skipIf(!kind.available)('reconcile shows when each rival request of an attempt was heard, not when the replay noted it', async () => {
    const { repo, projectId, clock, as } = await openUnderTest(kind);
    const { id } = await repo.enqueue(imageTask(projectId, 'a fox'), clock.now());
    const key = 'studio-task-1-attempt-1';
    await repo.claim('image', 4, LEASE, as('a'));
    await repo.markSubmitStarted(id, key, LEASE, as('a'));
    await repo.parkUnknown(id, 'lost', as('a'));
    // Journals written before receipts named their database: which of the two is this task's cannot be told.
    const rival = (requestId: string, at: number): Receipt => ({ database: null, taskId: id, task: null, idempotencyKey: key, requestId, handle: null, at });
    const heard = [rival('req-mine', clock.now() - 60_000), rival('req-theirs', clock.now() - 30_000)];
    await repo.noteRivalReceipts(heard, clock.now());
    // A provider that cannot list past requests: only what the task's history names is offered.
    const { candidates } = await reconcile(repo, {} as InputFiles, undefined, id, clock.now());
    expect(candidates.map((c) => [c.requestId, c.createdAt])).toEqual(heard.map((r) => [r.requestId, r.at]));
  });
});

describe('the receipt journal', () => {
  it('moves settled files to its archive, reads them back, and prunes them after the documented period', () => {
    const dataDir = tempDir();
    const database = 'd'.repeat(32);
    const receipt = (taskId: number): Receipt => ({ database, taskId, task: { inputHash: 'h', createdAt: 1 }, idempotencyKey: `studio-${database}-task-${taskId}-attempt-1`, requestId: `req-${taskId}`, handle: null, at: 1 });
    const gone = journalOfGoneWriter(dataDir, database, [receipt(1)]);
    const journal = new ReceiptJournal(dataDir, database);
    journal.append(receipt(2));
    journal.settle(() => true);
    expect(existsSync(gone)).toBe(false);
    expect(journal.all()).toEqual([]);
    expect(journal.archived().map((r) => r.requestId).sort()).toEqual(['req-1', 'req-2']);

    const archive = join(dataDir, 'receipts', database, 'settled');
    const old = (Date.now() - SETTLED_KEPT_MS - 60_000) / 1000;
    for (const file of readdirSync(archive)) if (file.includes(`-${process.pid}-`)) utimesSync(join(archive, file), old, old);
    journal.settle(() => true);
    expect(journal.archived().map((r) => r.requestId)).toEqual(['req-1']);
    journal.close();
  });
});

describe('a database restored from a backup older than the last start-up', () => {
  it('takes the request its row had sent from the settled receipts, instead of sending again: one charge', async () => {
    const sim = await simulatorForTest({ jobMs: 200 });
    const dataDir = tempDir();
    writeSettings(dataDir, { engine: { tickMs: 100, poll: { intervalMs: 100, maxIntervalMs: 200 } } });
    const env = { STUDIO_SIMULATOR_BASE_URL: sim.url };
    const db = databasePath(dataDir);
    const store = openSqliteStore(db);
    const project = await store.projects.ensure('Receipts', Date.now());
    const { id } = await store.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt: 'a red fox' } }, Date.now());
    const databaseId = store.databaseId;
    await store.close();
    copyFileSync(db, `${db}.bak`);
    for (let day = 0; day < 2; day++) {
      // The second start-up settles the first's journal.
      const worker = await runStudio(dataDir, ['worker', '--until-idle'], env);
      expect(worker.code, worker.stderr).toBe(0);
    }
    expect(sim.charges).toHaveLength(1);
    expect(readdirSync(join(dataDir, 'receipts', databaseId)).filter((f) => f.endsWith('.jsonl'))).toEqual([]);

    for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true });
    copyFileSync(`${db}.bak`, db);
    const worker = await runStudio(dataDir, ['worker', '--until-idle'], env);
    expect(worker.code, worker.stderr).toBe(0);
    expect(sim.charges).toHaveLength(1);
    const restored = openSqliteStore(db);
    expect(await restored.tasks.get(id)).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: sim.charges[0]!.requestId });
    await restored.close();
    // Kept in the archive, not in the journal.
    expect(readdirSync(join(dataDir, 'receipts', databaseId, 'settled'))).not.toEqual([]);
  });
});
