import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../main/db/database.ts';
import { connect, type TeamPool } from '../main/store/postgres/connection.ts';
import { PostgresTaskStore } from '../main/store/postgres/taskStore.ts';
import type { Lease, TaskStore } from '../main/store/port.ts';
import { databaseIdOf } from '../main/store/sqlite/databaseId.ts';
import { SqliteTaskStore } from '../main/store/sqlite/taskStore.ts';
import type { NewTask, Task } from '../main/domain/tasks/model.ts';
import { receiptOf } from './helpers/receipts.ts';
import { freshDatabase, postgresAvailable } from './helpers/postgres.ts';

const LEASE = 60_000;
const output = (name: string) => ({ path: `/media/${name}.png`, sha256: 'a'.repeat(64), bytes: 10, contentType: 'image/png' });

const pools: TeamPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.end()));
});

/** A fresh team database and two machines on it, each with its own pool and host name. */
async function team() {
  const url = await freshDatabase();
  const machine = (host: string) => {
    const pool = connect(url);
    pools.push(pool);
    return { pool, tasks: new PostgresTaskStore(pool.sql, host) };
  };
  const one = machine('host-one');
  const two = machine('host-two');
  const project = async (name: string, budget: number | null = null) => {
    const [row] = await one.pool.sql.query<{ id: number }>(`INSERT INTO projects (name, budget, created_at) VALUES ($1, $2, 0) RETURNING id`, [name, budget]);
    return row!.id;
  };
  return { one, two, project };
}

const as = (owner: string, now = Date.now()): Lease => ({ owner, now });
const image = (projectId: number, prompt: string, extra: Partial<NewTask> = {}): NewTask => ({
  projectId,
  kind: 'image',
  provider: 'fake',
  model: 'fake-image',
  input: { prompt },
  ...extra,
});

/** The database's clock, in milliseconds. */
async function dbNow(pool: TeamPool): Promise<number> {
  const [row] = await pool.sql.query<{ ms: number }>(`SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint AS ms`);
  return row!.ms;
}

describe.skipIf(!postgresAvailable)('the PostgreSQL task store', () => {
  it('claims fresh work to RUNNING and a released submitted row as SUBMITTED, saying which in the history', async () => {
    const { one, two, project } = await team();
    const projectId = await project('Fox');
    const { id } = await one.tasks.enqueue(image(projectId, 'a fox'), Date.now());
    expect(await one.tasks.claim('image', 4, LEASE, as('a'))).toMatchObject([{ id, status: 'RUNNING', leaseOwner: 'a' }]);
    await one.tasks.markSubmitStarted(id, 'k1', LEASE, as('a'));
    await one.tasks.recordSubmitted(id, { requestId: 'req-9', handle: null }, null, as('a'));
    expect(await one.tasks.expireLease(id, as('a'))).toBe(true);
    const [row] = await two.tasks.claim('image', 4, LEASE, as('b'));
    expect(row).toMatchObject({ id, status: 'SUBMITTED', remoteRequestId: 'req-9', leaseOwner: 'b' });
    const events = await two.tasks.events(id);
    expect(events.map((e) => [e.fromStatus, e.toStatus, e.reason])).toEqual([
      [null, 'PENDING', 'enqueued'],
      ['PENDING', 'RUNNING', 'claimed'],
      ['RUNNING', 'RUNNING', 'submit started'],
      ['RUNNING', 'SUBMITTED', 'provider accepted the request'],
      ['SUBMITTED', 'SUBMITTED', 'released: its worker stopped before finishing it'],
      ['SUBMITTED', 'SUBMITTED', 'reclaimed to poll its saved request'],
    ]);
    expect(events.at(-1)!.detail).toEqual({ owner: 'b' });
  });

  it('skips a row another transaction holds, without waiting for it', async () => {
    const { one, two, project } = await team();
    const projectId = await project('Fox');
    const held = await one.tasks.enqueue(image(projectId, 'held'), Date.now());
    const free = await one.tasks.enqueue(image(projectId, 'free'), Date.now());
    const client = await two.pool.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT id FROM tasks WHERE id = $1 FOR UPDATE', [held.id]);
      const started = Date.now();
      const claimed = await one.tasks.claim('image', 4, LEASE, as('a'));
      // The connection's lock wait is seconds: a claim that waited for the row would take that long, or fail.
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(claimed.map((t) => t.id)).toEqual([free.id]);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
    expect(await one.tasks.claim('image', 4, LEASE, as('a'))).toMatchObject([{ id: held.id, status: 'RUNNING' }]);
  });

  it('counts every machine’s leased rows: claims at once from two machines never run more than the concurrency', async () => {
    const { one, two, project } = await team();
    const projectId = await project('Fox');
    for (let i = 0; i < 20; i++) await one.tasks.enqueue(image(projectId, `fox ${i}`), Date.now());
    await one.tasks.enqueue({ ...image(projectId, 'a line'), kind: 'speech' }, Date.now());
    for (let round = 0; round < 3; round++) {
      const claims = await Promise.all(
        Array.from({ length: 8 }, (_, i) => (i % 2 ? one : two).tasks.claim('image', 3, LEASE, as(`owner-${round}-${i}`))),
      );
      const [row] = await one.pool.sql.query<{ n: number }>(`SELECT count(*) AS n FROM tasks WHERE kind = 'image' AND status = 'RUNNING'`);
      expect(claims.flat()).toHaveLength(3);
      expect(row!.n).toBe(3);
      for (const task of claims.flat()) await one.tasks.complete(task.id, { outputs: [output(`fox-${task.id}`)], costActual: null }, as(task.leaseOwner!));
    }
    // Another kind has slots of its own.
    expect(await two.tasks.claim('speech', 1, LEASE, as('c'))).toHaveLength(1);
  });

  it('fences every executor write by the lease owner: a stale owner changes nothing', async () => {
    const { one, two, project } = await team();
    const projectId = await project('Fox');
    const { id } = await one.tasks.enqueue(image(projectId, 'a fox', { estimate: { cost: 10, source: 'test', currency: 'USD' } }), Date.now());
    await one.tasks.claim('image', 1, LEASE, as('a'));
    const before = await one.tasks.get(id);
    const stale = as('b');
    expect(await two.tasks.markSubmitStarted(id, 'k', LEASE, stale)).toEqual({ refused: 'lease' });
    expect(await two.tasks.setEstimate(id, 99, 'other', 'EUR', stale)).toBe(false);
    expect(await two.tasks.saveProgress(id, 0.5, LEASE, stale)).toBe(false);
    expect(await two.tasks.setNote(id, 'hello', stale)).toBe(false);
    expect(await two.tasks.requeue(id, 0, 'again', stale)).toBeUndefined();
    expect(await two.tasks.parkUnknown(id, 'lost', stale)).toBeUndefined();
    expect(await two.tasks.fail(id, 'no', 'no', stale)).toBeUndefined();
    expect(await two.tasks.complete(id, { outputs: [output('x')], costActual: 5 }, stale)).toBeUndefined();
    expect(await two.tasks.renewLeases([id], LEASE, stale)).toEqual(new Set());
    expect(await two.tasks.expireLease(id, stale)).toBe(false);
    expect(await one.tasks.get(id)).toEqual(before);
    expect((await one.tasks.events(id)).map((e) => e.reason)).toEqual(['enqueued', 'claimed']);
    expect(await one.tasks.outputs(id)).toEqual([]);
    // The owner itself still may.
    expect(await one.tasks.markSubmitStarted(id, 'k', LEASE, as('a'))).toMatchObject({ marked: { attempts: 1, charged: 'maybe' } });
  });

  it('keeps task_events append-only: a trigger refuses UPDATE, DELETE and TRUNCATE', async () => {
    const { one, project } = await team();
    const { id } = await one.tasks.enqueue(image(await project('Fox'), 'a fox'), Date.now());
    const sql = one.pool.sql;
    await expect(sql.query(`UPDATE task_events SET reason = 'edited' WHERE task_id = $1`, [id])).rejects.toThrow(/task_events is append-only: UPDATE refused/);
    await expect(sql.query(`DELETE FROM task_events WHERE task_id = $1`, [id])).rejects.toThrow(/task_events is append-only: DELETE refused/);
    await expect(sql.query(`TRUNCATE task_events CASCADE`)).rejects.toThrow(/task_events is append-only: TRUNCATE refused/);
    expect((await one.tasks.events(id)).map((e) => e.reason)).toEqual(['enqueued']);
  });

  it('lets one of two machines spend the last of a budget at the boundary, and refuses the other before anything is sent', async () => {
    const { one, two, project } = await team();
    for (let round = 0; round < 5; round++) {
      const projectId = await project(`Budget ${round}`, 100_000);
      const estimate = { cost: 60_000, source: 'catalogue', currency: 'USD' };
      const first = await one.tasks.enqueue(image(projectId, `a ${round}`, { estimate }), Date.now());
      const second = await two.tasks.enqueue(image(projectId, `b ${round}`, { estimate }), Date.now());
      expect(await one.tasks.claim('image', 1, LEASE, as('a'))).toMatchObject([{ id: first.id }]);
      expect(await two.tasks.claim('image', 2, LEASE, as('b'))).toMatchObject([{ id: second.id }]);
      // Both boundary writes are made while a third connection holds the project, so both wait, then go at once.
      const holder = await one.pool.pool.connect();
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM projects WHERE id = $1 FOR UPDATE', [projectId]);
      const marks = Promise.all([one.tasks.markSubmitStarted(first.id, 'ka', LEASE, as('a')), two.tasks.markSubmitStarted(second.id, 'kb', LEASE, as('b'))]);
      await new Promise((resolve) => setTimeout(resolve, 100));
      await holder.query('COMMIT');
      holder.release();
      const results = await marks;
      expect(results.filter((r) => 'marked' in r)).toHaveLength(1);
      expect(results.filter((r) => 'refused' in r && r.refused === 'budget')).toHaveLength(1);
      const [spent] = await one.tasks.spend(projectId);
      expect(spent!.possiblyCharged).toBe(60_000);
      const refused = 'marked' in results[0] ? second.id : first.id;
      expect(await one.tasks.get(refused)).toMatchObject({ status: 'RUNNING', submitStartedAt: null, charged: 'no', attempts: 0 });
      for (const t of [first, second]) await one.tasks.fail(t.id, 'done', 'no', as(t.id === first.id ? 'a' : 'b'));
    }
  });

  it('takes lease times from the database clock: a caller whose clock runs ahead cannot take an unexpired lease', async () => {
    const { one, two, project } = await team();
    const { id } = await one.tasks.enqueue(image(await project('Fox'), 'a fox'), Date.now());
    const before = await dbNow(one.pool);
    const [claimed] = await one.tasks.claim('image', 1, 1_000, as('a'));
    const after = await dbNow(one.pool);
    expect(claimed!.leaseExpiresAt).toBeGreaterThanOrEqual(before + 1_000);
    expect(claimed!.leaseExpiresAt).toBeLessThanOrEqual(after + 1_000);
    expect(claimed!.heartbeatAt).toBeGreaterThanOrEqual(before);
    const ahead = Date.now() + 365 * 24 * 3600_000;
    expect(await two.tasks.claim('image', 1, LEASE, as('b', ahead))).toEqual([]);
    expect(await two.tasks.expiredLeases(ahead)).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    // Expired by the database's clock, whatever the callers' clocks say.
    expect((await two.tasks.expiredLeases(0)).map((t) => t.id)).toEqual([id]);
    expect(await two.tasks.claim('image', 1, LEASE, as('b'))).toMatchObject([{ id, leaseOwner: 'b' }]);
    // The renewal and the boundary write take the database's clock too.
    const renewedFrom = await dbNow(one.pool);
    expect(await two.tasks.renewLeases([id], LEASE, as('b', 0))).toEqual(new Set([id]));
    expect((await two.tasks.get(id))!.leaseExpiresAt).toBeGreaterThanOrEqual(renewedFrom + LEASE);
    const mark = await two.tasks.markSubmitStarted(id, 'k', LEASE, as('b', 5));
    // So does the send's window, which lookups compare with the provider's times: not the caller's 5.
    expect('marked' in mark && mark.marked.submitStartedAt).toBeGreaterThanOrEqual(renewedFrom);
    expect('marked' in mark && mark.marked.leaseExpiresAt).toBeGreaterThanOrEqual(renewedFrom + LEASE);
    const recorded = await two.tasks.recordSubmitted(id, { requestId: 'r-1', handle: null }, null, as('b', 5));
    expect(recorded!.submittedAt).toBeGreaterThanOrEqual(renewedFrom);
  });

  it('claims nothing of a kind another machine is claiming, at once: a stopped holder of the claim lock holds no one', async () => {
    const { one, two, project } = await team();
    const projectId = await project('Fox');
    await one.tasks.enqueue(image(projectId, 'a fox'), Date.now());
    const speech = await one.tasks.enqueue({ ...image(projectId, 'a line'), kind: 'speech' }, Date.now());
    const client = await two.pool.pool.connect();
    try {
      // A claim that stopped between taking the kind's lock and committing.
      await client.query('BEGIN');
      await client.query(`SELECT pg_advisory_xact_lock(hashtext('studio.task.claim'), hashtext('image'))`);
      const started = Date.now();
      expect(await one.tasks.claim('image', 4, LEASE, as('a'))).toEqual([]);
      // The connection's lock wait is seconds: a claim that waited for the lock would take that long, or fail.
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(await one.tasks.claim('speech', 4, LEASE, as('a'))).toMatchObject([{ id: speech.id }]);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
    expect(await one.tasks.claim('image', 4, LEASE, as('a'))).toHaveLength(1);
  });

  it('takes next attempt times from the database clock: machines whose clocks disagree by hours claim each other’s work', async () => {
    const { one, two, project } = await team();
    const projectId = await project('Fox');
    const hour = 3600_000;
    const ahead = await one.tasks.enqueue(image(projectId, 'enqueued ahead'), Date.now() + hour);
    expect(await two.tasks.claim('image', 4, LEASE, as('b', Date.now() - hour))).toMatchObject([{ id: ahead.id }]);
    const behind = await two.tasks.enqueue(image(projectId, 'enqueued behind'), Date.now() - hour);
    const [claimed] = await one.tasks.claim('image', 4, LEASE, as('a', Date.now() + hour));
    expect(claimed).toMatchObject({ id: behind.id });
    // A requeue's delay runs on the database's clock, whatever clock the requeuing and claiming machines keep.
    const requeuer = Date.now() - hour;
    const from = await dbNow(one.pool);
    await one.tasks.requeue(behind.id, requeuer + 10_000, 'rate limited', as('a', requeuer));
    const due = (await one.tasks.get(behind.id))!.nextAttemptAt;
    expect(due).toBeGreaterThanOrEqual(from + 10_000);
    expect(due).toBeLessThanOrEqual((await dbNow(one.pool)) + 10_000);
    for (const now of [Date.now() - hour, Date.now(), Date.now() + hour]) {
      expect(await two.tasks.claim('image', 4, LEASE, as('b', now))).toEqual([]);
    }
    await one.pool.sql.query(`UPDATE tasks SET next_attempt_at = next_attempt_at - 10000 WHERE id = $1`, [behind.id]);
    expect(await two.tasks.claim('image', 4, LEASE, as('b', Date.now() - hour))).toMatchObject([{ id: behind.id }]);
  });

  it('completes from RUNNING or SUBMITTED in one statement, naming the status it left even when another machine moved it meanwhile', async () => {
    const { one, two, project } = await team();
    const projectId = await project('Fox');
    const { id } = await one.tasks.enqueue(image(projectId, 'a fox'), Date.now());
    await one.tasks.claim('image', 1, LEASE, as('a'));
    await one.tasks.markSubmitStarted(id, 'k', LEASE, as('a'));
    let committed!: () => void;
    const held = new Promise<void>((resolve) => (committed = resolve));
    let updated!: () => void;
    const holding = new Promise<void>((resolve) => (updated = resolve));
    // Another machine records the request id (RUNNING to SUBMITTED) and commits while the completion waits for the row.
    const moving = two.pool.sql.tx(async (tx) => {
      await tx.query(`UPDATE tasks SET status = 'SUBMITTED', remote_request_id = 'req' WHERE id = $1`, [id]);
      updated();
      await held;
    });
    await holding;
    const completing = one.tasks.complete(id, { outputs: [output('fox')], costActual: null }, as('a'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    committed();
    await moving;
    expect(await completing).toMatchObject({ id, status: 'SUCCEEDED', remoteRequestId: 'req' });
    expect((await one.tasks.events(id)).map((e) => [e.fromStatus, e.toStatus]).at(-1)).toEqual(['SUBMITTED', 'SUCCEEDED']);

    const render = await one.tasks.enqueue(image(projectId, 'a render'), Date.now());
    await one.tasks.claim('image', 1, LEASE, as('a'));
    expect(await one.tasks.complete(render.id, { outputs: [output('render')], costActual: null }, as('b'))).toBeUndefined();
    expect(await one.tasks.complete(render.id, { outputs: [output('render')], costActual: null }, as('a'))).toMatchObject({ status: 'SUCCEEDED' });
    expect((await one.tasks.events(render.id)).map((e) => [e.fromStatus, e.toStatus]).at(-1)).toEqual(['RUNNING', 'SUCCEEDED']);
  });

  it('recovers many rows in one write each, only those expired by the database clock and still as the sweep saw them', async () => {
    const { one, two, project } = await team();
    const projectId = await project('Fox');
    for (const prompt of ['a', 'b', 'c', 'd']) await one.tasks.enqueue(image(projectId, prompt), Date.now());
    const claimed = await one.tasks.claim('image', 4, LEASE, as('a'));
    const [fresh, sending, renewed, submitted] = claimed.map((t) => t.id);
    await one.tasks.markSubmitStarted(sending!, 'k-sending', LEASE, as('a'));
    await one.tasks.markSubmitStarted(submitted!, 'k-submitted', LEASE, as('a'));
    // Unexpired by the database's clock: a caller's clock a year ahead recovers none of them.
    const ahead = Date.now() + 365 * 24 * 3600_000;
    expect(await two.tasks.recoverRequeueAll(claimed, ahead, 'too early')).toEqual([]);
    expect(await two.tasks.recoverParkAll(claimed.map((task) => ({ task, reason: 'too early' })), ahead)).toEqual([]);
    expect((await two.tasks.list()).map((t) => t.status)).toEqual(['RUNNING', 'RUNNING', 'RUNNING', 'RUNNING']);

    await one.tasks.expireLeasesOf(['a'], Date.now());
    const seen = await two.tasks.expiredLeases(0);
    expect(seen.map((t) => t.id)).toEqual([fresh, sending, renewed, submitted]);
    // After the sweep looked: one owner renews, another row's request id is recorded.
    await one.tasks.renewLeases([renewed!], LEASE, as('a'));
    await one.tasks.recordSubmitted(submitted!, { requestId: 'req', handle: null }, null, as('a'));
    const now = Date.now();
    const requeued = await two.tasks.recoverRequeueAll(seen, now, 'lease expired before anything was sent; requeued');
    expect(requeued.map((t) => [t.id, t.status, t.leaseOwner])).toEqual([[fresh, 'PENDING', null]]);
    const parked = await two.tasks.recoverParkAll(seen.map((task) => ({ task, reason: `parked ${task.id}` })), now);
    expect(parked.map((t) => [t.id, t.status, t.unknownReason, t.charged])).toEqual([[sending, 'OUTCOME_UNKNOWN', `parked ${sending}`, 'maybe']]);
    expect((await two.tasks.get(renewed!))!).toMatchObject({ status: 'RUNNING', leaseOwner: 'a' });
    expect((await two.tasks.get(submitted!))!).toMatchObject({ status: 'SUBMITTED', remoteRequestId: 'req' });
    const last = async (id: number) => (await two.tasks.events(id)).map((e) => [e.at, e.fromStatus, e.toStatus, e.actor, e.reason, e.detail]).at(-1);
    expect(await last(fresh!)).toEqual([now, 'RUNNING', 'PENDING', 'engine', 'lease expired before anything was sent; requeued', null]);
    expect(await last(sending!)).toEqual([now, 'RUNNING', 'OUTCOME_UNKNOWN', 'engine', `parked ${sending}`, null]);
  });

  it('holds one request id for one task only, compared without case, and refuses the second of two adoptions at once', async () => {
    const { one, two, project } = await team();
    const projectId = await project('Fox');
    const parked = async (prompt: string) => {
      const { id } = await one.tasks.enqueue(image(projectId, prompt), Date.now());
      await one.tasks.claim('image', 10, LEASE, as('a'));
      await one.tasks.markSubmitStarted(id, `k-${id}`, LEASE, as('a'));
      await one.tasks.parkUnknown(id, 'the connection dropped', as('a'));
      return id;
    };
    const holder = await parked('held');
    await one.tasks.adopt(holder, 'REQ-1', Date.now());
    const other = await parked('other');
    expect(await two.tasks.adopt(other, 'req-1', Date.now())).toBeUndefined();
    expect(await two.tasks.requestHolder(other, ['Req-1'])).toMatchObject({ id: holder });
    expect(await two.tasks.requestIdsInUse('fake', ['req-1', 'req-2'], other)).toEqual(new Set(['req-1']));
    // Whatever writes the table: the index refuses a second holder.
    await expect(one.pool.sql.query(`UPDATE tasks SET remote_request_id = 'req-1' WHERE id = $1`, [other])).rejects.toThrow(/tasks_remote_request/);
    // Another provider's request of the same id is another request.
    await expect(
      one.pool.sql.query(`UPDATE tasks SET provider = 'another', remote_request_id = 'req-1' WHERE id = $1 RETURNING id`, [other]),
    ).resolves.toHaveLength(1);

    for (let round = 0; round < 5; round++) {
      const [x, y] = [await parked(`x ${round}`), await parked(`y ${round}`)];
      const adopted = await Promise.all([one.tasks.adopt(x, `shared-${round}`, Date.now()), two.tasks.adopt(y, `SHARED-${round}`, Date.now())]);
      expect(adopted.filter(Boolean)).toHaveLength(1);
    }
  });

  it('lets a person enqueue one input twice: only a Generate judges reuse', async () => {
    const { one, project } = await team();
    const projectId = await project('Fox');
    const a = await one.tasks.enqueue(image(projectId, 'a fox'), Date.now());
    const b = await one.tasks.enqueue(image(projectId, 'a fox'), Date.now());
    expect((await one.tasks.withSameInput(projectId, a.inputHash)).map((t) => t.id)).toEqual([b.id, a.id]);
  });

  it('records the machine that saved each output, and wakes this process when work is added or a slot freed', async () => {
    const { one, two, project } = await team();
    const projectId = await project('Fox');
    let woken = 0;
    const stop = two.tasks.onClaimable(() => woken++);
    const { id } = await two.tasks.enqueue(image(projectId, 'a fox'), Date.now());
    expect(woken).toBe(1);
    await two.tasks.claim('image', 1, LEASE, as('b'));
    expect(woken).toBe(1);
    await two.tasks.complete(id, { outputs: [output('one'), output('two')], costActual: 41_000, costSource: 'provider' }, as('b'));
    expect(woken).toBe(2);
    stop();
    const rows = await one.pool.sql.query(`SELECT idx, machine FROM task_outputs WHERE task_id = $1 ORDER BY idx`, [id]);
    expect(rows).toEqual([
      { idx: 0, machine: 'host-two' },
      { idx: 1, machine: 'host-two' },
    ]);
    expect(await one.tasks.outputs(id)).toMatchObject([{ index: 0, path: '/media/one.png' }, { index: 1, path: '/media/two.png' }]);
  });
});

/** Whether a send's times are set: PostgreSQL takes them from its own clock (the callers' in the embedded store). */
const dbTimes = (t: Task) => ({ submitStartedAt: t.submitStartedAt === null ? null : 'set', submittedAt: t.submittedAt === null ? null : 'set' });

/** The same calls on both stores; what each returns and logs, without the lease times PostgreSQL takes from its own clock. */
async function script(tasks: TaskStore, projectId: number, now: number) {
  const t0 = 1_700_000_000_000;
  const estimate = { cost: 25_000, source: 'catalogue', currency: 'USD' };
  const img = await tasks.enqueue(image(projectId, 'a fox', { estimate }), t0);
  const clip = await tasks.enqueue({ ...image(projectId, 'a fox runs', { estimate }), kind: 'clip', model: 'fake-clip', dependsOn: [img.id] }, t0 + 1);
  const after = await tasks.enqueue({ ...image(projectId, 'a fox rests'), kind: 'clip', model: 'fake-clip', dependsOn: [clip.id] }, t0 + 2);
  const lost = await tasks.enqueue(image(projectId, 'a lost fox', { estimate }), t0 + 3);
  const refused = await tasks.enqueue(image(projectId, 'a refused fox', { estimate }), t0 + 4);
  const a = as('a', now);
  await tasks.claim('image', 2, LEASE, a);
  await tasks.claim('clip', 2, LEASE, a);
  await tasks.markSubmitStarted(img.id, 'k-img', LEASE, a);
  await tasks.recordSubmitted(img.id, { requestId: 'req-img', handle: { status: 'https://x/status' } }, { cost: 30_000, source: 'quote' }, a);
  await tasks.saveProgress(img.id, 0.5, LEASE, a);
  // Later than the send by either clock: PostgreSQL's send times are its own, a little after the callers' `now`.
  await tasks.complete(img.id, { outputs: [output('img')], costActual: 31_000, costSource: 'provider' }, as('a', now + 60_000));
  await tasks.claim('image', 2, LEASE, a);
  await tasks.claim('clip', 2, LEASE, a);
  await tasks.markSubmitStarted(lost.id, 'k-lost', LEASE, a);
  await tasks.noteRequestId(lost.id, 'req-lost', a);
  await tasks.parkUnknown(lost.id, 'the answer never came', a);
  await tasks.resubmit(lost.id, now);
  await tasks.claim('image', 3, LEASE, a);
  await tasks.markSubmitStarted(lost.id, 'k-lost-2', LEASE, a);
  await tasks.parkUnknown(lost.id, 'the answer never came again', a);
  await tasks.lookupNoted(lost.id, 'k-lost-2', 'looked it up', { lookup: 1, verdict: 'again' }, now);
  const due = await tasks.dueForLookup(['fake'], 3, 0, now + 1, 10);
  await tasks.adoptFound(lost.id, 'k-lost-2', 'req-found', 'same input', { seen: 1 }, now);
  await tasks.markSubmitStarted(clip.id, 'k-clip', LEASE, a);
  await tasks.fail(clip.id, 'the model refused the input', 'no', a);
  await tasks.setNote(refused.id, 'waiting', a);
  await tasks.requeue(refused.id, now, 'rate limited', a);
  await tasks.cancel(refused.id, now);
  await tasks.note(lost.id, 'looked at', { by: 'test' }, now);
  const ids = [img.id, clip.id, after.id, lost.id, refused.id];
  const strip = (t: Task) => ({ ...t, ...dbTimes(t), leaseExpiresAt: t.leaseExpiresAt === null ? null : 'set', heartbeatAt: t.heartbeatAt === null ? null : 'set', nextAttemptAt: 'set' });
  return {
    tasks: await Promise.all(ids.map(async (id) => strip((await tasks.get(id))!))),
    events: await Promise.all(ids.map(async (id) => (await tasks.events(id)).map(({ id: _, ...e }) => e))),
    outputs: await tasks.outputs(img.id),
    due: due.map((d) => ({ id: d.task.id, tries: d.tries })),
    spend: await tasks.spend(projectId),
    byModel: await tasks.spendByModel(projectId),
    byDay: await tasks.spendByDay(projectId),
    library: await tasks.library({ search: 'FOX' }, 0, 10).then((l) => ({ ...l, items: l.items.map((i) => ({ ...i, task: strip(i.task) })) })),
    counts: (await tasks.counts()).sort((x, y) => x.status.localeCompare(y.status)),
    outstanding: await tasks.hasOutstandingWork(),
    durations: (await tasks.recentDurations('fake', 'fake-image')).length,
  };
}

/** More of the same: receipts, late results, recovery, renders and the reads made from them. */
async function scriptMore(tasks: TaskStore, database: string, projectId: number, now: number) {
  const a = as('a', now);
  const strip = (t: Task | undefined) =>
    t && { ...t, ...dbTimes(t), leaseExpiresAt: t.leaseExpiresAt === null ? null : 'set', heartbeatAt: t.heartbeatAt === null ? null : 'set', nextAttemptAt: 'set' };
  const sent = async (prompt: string, key: string, owner = a) => {
    const { id } = await tasks.enqueue(image(projectId, prompt), now);
    await tasks.claim('image', 10, LEASE, owner);
    await tasks.markSubmitStarted(id, key, LEASE, owner);
    return id;
  };
  const still = await sent('a still', 'k-still');
  await tasks.recordSubmitted(still, { requestId: 'req-still', handle: null }, null, a);
  await tasks.complete(still, { outputs: [output('still')], costActual: 20_000 }, a);
  const clip = await tasks.enqueue({ ...image(projectId, 'it moves'), kind: 'clip', model: 'fake-clip', input: { image: { $output: still } }, dependsOn: [still] }, now);
  await tasks.claim('clip', 1, LEASE, a);
  await tasks.complete(clip.id, { outputs: [output('clip')], costActual: null }, a);
  const scenes = [{ id: 'dawn', clip: { $output: clip.id }, narration: null }];
  const render = await tasks.enqueue({ ...image(projectId, 'render'), kind: 'render', provider: 'studio', model: 'ffmpeg', input: { scenes }, dependsOn: [clip.id] }, now);
  await tasks.claim('render', 1, LEASE, a);
  await tasks.complete(render.id, { outputs: [output('render')], costActual: null }, { owner: 'a', now: now + 500 });

  const receipted = await sent('a receipt', 'k-receipt');
  const receipt = { ...(await receiptOf(tasks, database, receipted, 'k-receipt', 'req-receipt')), handle: { status: 'https://x' }, at: now };
  const applied = await tasks.applyReceipt(receipt, true, now);
  const late = await sent('a late result', 'k-late');
  await tasks.cancel(late, now);
  await tasks.completeAttempt(late, 'k-late', { outputs: [output('late')], costActual: 7_000, requestId: 'req-late' }, now);
  const given = await sent('given up', 'k-given');
  await tasks.parkUnknown(given, 'lost', a);
  await tasks.giveUp(given, now);
  const polled = await sent('polled later', 'k-polled');
  await tasks.recordSubmitted(polled, { requestId: 'req-polled', handle: null }, null, a);
  await tasks.retryLater(polled, now + 1_000, 'the provider asked to wait', a);
  const dead = as('dead', now);
  const orphan = await tasks.enqueue(image(projectId, 'orphan'), now);
  await tasks.claim('image', 10, LEASE, dead);
  const orphanSent = await sent('orphan sent', 'k-orphan', dead);
  const expired = await tasks.expireLeasesOf(['dead'], now);
  const leased = await tasks.expiredLeases(now);
  const recovered = [
    ...(await tasks.recoverRequeueAll(leased.filter((t) => t.submitStartedAt === null), now, 'requeued')),
    ...(await tasks.recoverParkAll(leased.filter((t) => t.submitStartedAt !== null).map((task) => ({ task, reason: 'parked: it may have been sent' })), now)),
  ];
  const paths = async (id: number) => (await tasks.outputs(id)).map((o) => o.path);
  const filesBefore = await paths(still);
  await tasks.forgetOutputs(still, 'deleted by the person', ['/media/still.png'], now);
  const ids = [still, clip.id, render.id, receipted, late, given, polled, orphan.id, orphanSent];
  return {
    tasks: await Promise.all(ids.map(async (id) => strip(await tasks.get(id)))),
    events: await Promise.all(ids.map(async (id) => (await tasks.events(id)).map(({ id: _, ...e }) => e))),
    applied: strip(applied),
    settled: await tasks.receiptSettled(receipt),
    expired,
    recovered: recovered.map(strip),
    files: [filesBefore, await paths(still), await paths(late)],
    scenes: [...(await tasks.scenesOf([still, clip.id, render.id, 999]))],
    pending: (await tasks.pendingDependents(still)).map((t) => t.id),
    related: await tasks.related(clip.id).then((r) => ({ dependsOn: r.dependsOn.map((t) => t.id), dependents: r.dependents.map((t) => t.id) })),
    page: await tasks.page(projectId, 1, 3).then((p) => ({ total: p.total, ids: p.tasks.map((t) => t.id) })),
    renderDurations: await tasks.recentRenderDurations('studio', 'ffmpeg'),
    claimedAt: [...(await tasks.claimedAt([render.id, clip.id]))],
    byModelAll: await tasks.spendByModelAll(),
    byDayAll: await tasks.spendByDayAll(),
    providers: await tasks.libraryProviders(),
    unknown: await tasks.unknownProviders(),
    holder: (await tasks.requestHolder(late, ['REQ-POLLED']))?.id,
    overlapping: await tasks.sameInputOverlapping({ id: 0, inputHash: (await tasks.get(late))!.inputHash }, now - 1, now + 60_000),
    unendedBefore: (await tasks.unendedBefore('fake', now + 60_000, late)).map((t) => [t.id, t.status]),
    unendedLater: (await tasks.unendedBefore('fake', now - 60_000, late)).map((t) => t.id),
    succeeded: (await tasks.list({ projectId, status: 'SUCCEEDED' })).map((t) => t.id),
    libraryByKind: await tasks.library({ kind: 'render', provider: 'studio', from: now, to: now + 1_000 }, 0, 5).then((l) => ({ total: l.total, ids: l.items.map((i) => i.task.id) })),
  };
}

describe.skipIf(!postgresAvailable)('the PostgreSQL and SQLite task stores', () => {
  it('give the same statuses, figures and history for the same calls', async () => {
    const { one, project } = await team();
    const pgProject = await project('Parity');
    const dir = mkdtempSync(join(tmpdir(), 'studio-parity-'));
    const db = openDatabase(join(dir, 'studio.db'));
    try {
      const sqliteProject = Number(db.prepare(`INSERT INTO projects (name, created_at) VALUES ('Parity', 0)`).run().lastInsertRowid);
      expect(sqliteProject).toBe(pgProject);
      // The callers' clock is the same for both; PostgreSQL's lease and next attempt times are its own, near it.
      const now = Date.now();
      const onSqlite = await script(new SqliteTaskStore(db, 'host-one'), sqliteProject, now);
      const onPostgres = await script(one.tasks, pgProject, now);
      expect(onPostgres).toEqual(onSqlite);
      expect(onPostgres.tasks.map((t) => t.status)).toEqual(['SUCCEEDED', 'FAILED', 'CANCELLED', 'SUBMITTED', 'CANCELLED']);
      const [pgDatabase] = await one.pool.sql.query<{ id: string }>(`SELECT id FROM database_identity`);
      const moreOnSqlite = await scriptMore(new SqliteTaskStore(db, 'host-one'), databaseIdOf(db), sqliteProject, now);
      const moreOnPostgres = await scriptMore(one.tasks, pgDatabase!.id, pgProject, now);
      expect(moreOnPostgres).toEqual(moreOnSqlite);
      expect(onPostgres.due).toEqual([{ id: 4, tries: 1 }]);
      expect(moreOnPostgres).toMatchObject({ expired: 2, settled: true, libraryByKind: { total: 1, ids: [8] }, holder: 12, unendedLater: [] });
      // Those still being sent, submitted or unknown; the ended ones ended before the time asked.
      expect(moreOnPostgres.unendedBefore.map(([, status]) => status)).toEqual(expect.arrayContaining(['SUBMITTED', 'OUTCOME_UNKNOWN']));
      expect(moreOnPostgres.unendedBefore.every(([, status]) => ['RUNNING', 'SUBMITTED', 'OUTCOME_UNKNOWN'].includes(status as string))).toBe(true);
      expect(moreOnPostgres.recovered.map((t) => t!.status)).toEqual(['PENDING', 'OUTCOME_UNKNOWN']);
      expect(moreOnPostgres.scenes).toEqual([[6, 'dawn'], [7, 'dawn'], [8, null], [999, null]]);
      // A deleted result keeps its output rows.
      expect(moreOnPostgres.files).toEqual([['/media/still.png'], ['/media/still.png'], ['/media/late.png']]);
      expect(moreOnPostgres.tasks.map((t) => t!.status)).toEqual([
        'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'SUBMITTED', 'SUCCEEDED', 'FAILED', 'SUBMITTED', 'PENDING', 'OUTCOME_UNKNOWN',
      ]);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
