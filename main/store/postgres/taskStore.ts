import { hostname } from 'node:os';
import pg from 'pg';
import type { Receipt, SavedOutput } from '../../ports.ts';
import type { Actor, Charged, Kind, NewTask, RemoteRef, Status, Task, TaskEvent, TaskOutput } from '../../tasks/model.ts';
import { inputHash } from '../../tasks/inputHash.ts';
import { REQUEST_HELD_NOTE, requestNames } from '../../tasks/requestHeld.ts';
import { afterCancelDetail, CANCELLED_AFTER_PAID, NOT_SENT_AFTER_CANCEL } from '../../tasks/cancelledAfterPaid.ts';
import { cancelledWith, didNotSucceed, type DependentWords } from '../../tasks/dependentWords.ts';
import { rowToEvent, rowToOutput, rowToTask, type EventRow, type OutputRow, type TaskRow } from '../../tasks/rows.ts';
import type { BoundaryMark, CompletedResult, DaySpend, InputUpload, Lease, LibraryFilter, ModelSpend, SpendRow, TaskStore } from '../port.ts';
import { BEHIND_JOURNAL, behindJournalReason, collectedWords, receiptOrigin, receiptParams, receiptSettledBy, RIVAL_RECEIPTS, siblingWords, type ReceiptRow } from '../receiptParams.ts';
import { notLinkedYet } from '../lateOutputs.ts';
import { inlined } from './inlined.ts';
import { named } from './named.ts';
import type { Sql } from './sql.ts';

interface Transition {
  /**
   * The status the write's condition already pins, or 'kept' when the write never changes the status, or 'read'
   * to read it in the same statement under the row's lock (see transitionWith). Without it the row is locked and
   * its status read first, so the event names the status the write really left.
   */
  from?: Status | 'kept' | 'read';
  actor: Actor;
  reason: string;
  detail?: unknown;
  /** More writes of the same transition, as further WITH queries reading the updated row from `changed`. */
  also?: string;
  /** WITH queries the update reads, run before it. */
  before?: string;
  /** An SQL expression for the event's detail as JSON text, read in the statement: in place of `detail`. */
  detailFrom?: string;
}

/**
 * The database's clock in milliseconds. Lease times (lease_expires_at, heartbeat_at), next_attempt_at, and every
 * comparison with them use it, so a machine whose clock runs ahead cannot take a lease early, and one whose clock
 * runs behind still claims what others enqueued. A caller's time for next_attempt_at is kept as its delay from
 * the caller's now, applied to the database's clock (see DUE_AT). So are a send's window (submit_started_at,
 * submitted_at): lookups compare it with the provider's times, and a machine whose clock is wrong must not move it
 * out of where the provider lists the request. Every other time (created_at, updated_at, events' `at`) is the
 * caller's, which in team mode is the database's clock as the caller measured it (see DatabaseClock).
 */
const CLOCK = `clock AS (SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint AS ms)`;
const DB_NOW = `(SELECT ms FROM clock)`;

/** The caller's absolute time in the parameter `at`, as the same delay from now by the database's clock. */
const DUE_AT = (at: string) => `${DB_NOW} + (@${at}::bigint - @now::bigint)`;

const LEASED = `status IN ('RUNNING', 'SUBMITTED')`;

/** What a project has spent or may have spent: billed, else estimated, for accepted and unknown requests. */
const PROJECT_SPEND = `(SELECT coalesce(sum(CASE WHEN s.charged <> 'no' THEN coalesce(s.cost_actual, s.cost_estimated, 0) ELSE 0 END)
                                   + sum(s.cost_abandoned), 0)
                         FROM tasks s WHERE s.project_id = tasks.project_id)`;

/**
 * This task's estimate still fits in its project's budget (or the project has none). A task of unknown price (the
 * person confirmed it) is never counted as 0: it goes only while something of the budget is left.
 */
const WITHIN_BUDGET = `(SELECT CASE WHEN p.budget IS NULL THEN true
                                    WHEN tasks.cost_estimated IS NULL THEN ${PROJECT_SPEND} < p.budget
                                    ELSE ${PROJECT_SPEND} + tasks.cost_estimated <= p.budget END
                          FROM projects p WHERE p.id = tasks.project_id)`;

// Ownership is the fence: a takeover or a recovery changes lease_owner, and recovery writes are themselves
// conditioned on the exact lease they saw, so an owner that was only asleep may renew and carry on.
const FENCE = `lease_owner = @owner::text`;

/** A write after the boundary mark also names the attempt it marked (see Lease.attempt). */
const fence = (lease: Lease) => (lease.attempt === undefined ? FENCE : `${FENCE} AND idempotency_key = @attempt::text`);

/**
 * A task that sent one request only and holds its id: a listed request of another id is not its own, so it makes no
 * lookup of the same input ambiguous (its own is marked taken there).
 */
const ONE_KNOWN_REQUEST = `(remote_request_id IS NOT NULL AND attempts = 1)`;

/** When the task marked attempt @key: the send time of that attempt's request, whenever its id was heard. */
const MARKED_AT = `(SELECT max(e.at) FROM task_events e WHERE e.task_id = tasks.id AND e.reason = 'submit started'
                      AND e.detail_json::json ->> 'idempotencyKey' = @key::text)`;

/** @key is an attempt this task marked (its boundary event names it), not a stray key. */
const MARKED_BEFORE = `EXISTS (SELECT 1 FROM task_events e WHERE e.task_id = tasks.id AND e.reason = 'submit started'
                                 AND e.detail_json::json ->> 'idempotencyKey' = @key::text)`;

/** Which of the task's marked attempts @key is: 1 for the first, 0 when the task never marked it. */
const ATTEMPT_NUMBER = `(SELECT count(*)::integer FROM task_events e WHERE e.task_id = tasks.id AND e.reason = 'submit started'
                          AND e.id <= (SELECT min(m.id) FROM task_events m WHERE m.task_id = tasks.id AND m.reason = 'submit started'
                                                                              AND m.detail_json::json ->> 'idempotencyKey' = @key::text))`;

/**
 * Attempt @key was counted in the row's abandoned amount: a person resubmitted the row after it was marked, before any
 * later attempt was (the resubmit adds the estimate to cost_abandoned; a retry of the engine adds nothing).
 */
const RESUBMITTED = 'resubmitted: the earlier attempt may also have been charged';
const ABANDONED_AT_KEY = `(SELECT e.reason FROM task_events e WHERE e.task_id = tasks.id AND e.reason IN ('submit started', '${RESUBMITTED}')
                             AND e.id > (SELECT min(m.id) FROM task_events m WHERE m.task_id = tasks.id AND m.reason = 'submit started'
                                                                                 AND m.detail_json::json ->> 'idempotencyKey' = @key::text)
                           ORDER BY e.id LIMIT 1) IS NOT DISTINCT FROM '${RESUBMITTED}'`;
const UNCOUNT_ABANDONED = `cost_abandoned = CASE WHEN ${ABANDONED_AT_KEY} THEN greatest(0, cost_abandoned - coalesce(cost_estimated, 0)) ELSE cost_abandoned END`;

/**
 * The history of a row that moved on keeps the request of an earlier attempt named after it, or the task that
 * collects it (see applyReceipt).
 */
const LATE_REQUEST = 'the request of an earlier attempt was named after the task had moved on; that attempt may have been charged';
const LATE_NOTED = `EXISTS (SELECT 1 FROM task_events e WHERE e.task_id = tasks.id AND e.detail_json::json ->> 'requestId' = @requestId::text
                              AND (e.reason = '${LATE_REQUEST}' OR e.detail_json::json ->> 'collectedAs' IS NOT NULL))`;

/** The person cancelled this task after its request was paid for: still cancelled, or followed since (see followAfterCancel). */
const AFTER_CANCEL = `(status = 'CANCELLED' OR EXISTS (SELECT 1 FROM task_events e WHERE e.task_id = tasks.id AND e.detail_json::json ->> 'afterCancel' = 'true'
                                                       AND e.detail_json::json ->> 'requestId' = tasks.remote_request_id))`;

/**
 * A row whose request is looked for at the provider (see dueForLookup), as `t`: an unknown outcome, or a task cancelled
 * while its request was being sent, which may have left and be charged.
 */
const LOOKED_FOR = `(t.status = 'OUTCOME_UNKNOWN' OR (t.status = 'CANCELLED' AND t.submit_started_at IS NOT NULL AND t.charged = 'maybe' AND t.idempotency_key IS NOT NULL))`;

/** The words a task cancelled after its request was paid for ends with: the latest said for its request (see afterCancelDetail), else @keptNote. */
const KEPT_AFTER_CANCEL = `coalesce((SELECT e.detail_json::json ->> 'kept' FROM task_events e WHERE e.task_id = tasks.id AND e.detail_json::json ->> 'afterCancel' = 'true'
                                        AND e.detail_json::json ->> 'kept' IS NOT NULL AND e.detail_json::json ->> 'requestId' = tasks.remote_request_id
                                      ORDER BY e.id DESC LIMIT 1), @keptNote::text)`;

/**
 * A cancelled row holding a request named after its cancel that nothing followed or settled since (its process died
 * between the two): no event of that request before the cancel, none after it saying what became of it.
 */
const UNFOLLOWED_AFTER_CANCEL = `status = 'CANCELLED' AND remote_request_id IS NOT NULL AND submit_started_at IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM task_events e WHERE e.task_id = tasks.id AND e.detail_json::json ->> 'requestId' = tasks.remote_request_id
                    AND (e.detail_json::json ->> 'afterCancel' = 'true' OR e.reason LIKE 'request % arrived after the cancel;%'
                         OR e.id < (SELECT max(c.id) FROM task_events c WHERE c.task_id = tasks.id AND c.actor = 'person' AND c.reason = 'cancelled')))`;

/** The row is the task a receipt names (see receiptOrigin): always, for a receipt that names none. */
const SAME_TASK = `(@inputHash::text IS NULL OR (input_hash = @inputHash::text AND created_at = @createdAt::bigint))`;

/**
 * Another task of the same provider already holds @requestId, as its id or its other name (remote_alias). Compared
 * without case: providers print their ids in one case, but a person may type another, and one request must never
 * count for two tasks.
 */
const HELD_ELSEWHERE = `EXISTS (SELECT 1 FROM tasks o WHERE o.provider = tasks.provider AND o.id <> tasks.id
                                  AND (lower(o.remote_request_id) IN (lower(@requestId::text), lower(@alias::text))
                                       OR lower(o.remote_alias) IN (lower(@requestId::text), lower(@alias::text))))`;

/** Some task of the same provider, this one included, holds @requestId as its id or its other name (see receiptSettledBy). */
const HELD_BY_A_TASK = `EXISTS (SELECT 1 FROM tasks o WHERE o.provider = tasks.provider
                                  AND (lower(o.remote_request_id) = lower(@requestId::text) OR lower(o.remote_alias) = lower(@requestId::text)))`;

/** Another task of the same provider holds any of @ids (a JSON array): every name the provider gives one request. */
const HELD_ANY = `EXISTS (SELECT 1 FROM tasks o, json_array_elements_text(@ids::json) i WHERE o.provider = tasks.provider AND o.id <> tasks.id
                            AND (lower(o.remote_request_id) = lower(i) OR lower(o.remote_alias) = lower(i)))`;

/**
 * Taken before a write that checks HELD_ELSEWHERE, in its transaction: two machines adopting one request for
 * two tasks then check one after the other, and the second sees the first's, as the embedded store's single
 * writer makes them do (the unique index on request ids would otherwise refuse the second with an error).
 */
const LOCK_REQUEST = `SELECT pg_advisory_xact_lock(hashtext('studio.task.request'), hashtext(lower(@requestId::text)))`;
/** LOCK_REQUEST for every name in @ids, taken in one order so two writes naming the same request never wait on each other. */
const LOCK_REQUESTS = `SELECT pg_advisory_xact_lock(hashtext('studio.task.request'), hashtext(n))
                         FROM (SELECT DISTINCT lower(i) AS n FROM json_array_elements_text(@ids::json) i ORDER BY 1) names`;

/**
 * A completion's request id that another task of the provider holds, when the row has none of its own to keep
 * (see completeWhere). What the event says of it, in the same words as the embedded store.
 */
const TAKEN_REQUEST = `taken AS MATERIALIZED (
  SELECT o.id FROM tasks t JOIN tasks o ON o.provider = t.provider AND lower(o.remote_request_id) = lower(@requestId::text) AND o.id <> t.id
   WHERE t.id = @id::bigint AND t.remote_request_id IS NULL ORDER BY o.id LIMIT 1)`;
const TAKEN_DETAIL = `(SELECT json_build_object('requestId', @requestId::text, 'heldBy', id, 'note', '${REQUEST_HELD_NOTE}')::text FROM taken)`;

/** A unique index refused a request id: another transaction gave it to another task and committed meanwhile. */
const requestTaken = (err: unknown) => err instanceof pg.DatabaseError && err.code === '23505' && err.constraint === 'tasks_remote_request';

/**
 * Taken by a claim just before it counts. The claim counts the kind's leased rows and takes that many fewer, but a
 * statement counts what had committed when it began: two machines claiming at once would each see the other's
 * slots free and together run more than the concurrency. With this lock only one counts at a time, and the count
 * is a statement after it, so it reads every claim committed before the lock was granted. SKIP LOCKED alone cannot
 * do it: it keeps claims from waiting on each other's rows, not from each counting the same free slots.
 *
 * The lock and the claim go to the server as one script (see claim), which runs to its end and commits whatever the
 * sender does meanwhile: a machine that stops (suspended, its link stalled) right after sending it holds the lock
 * for no longer than the claim takes on the server. The lock is tried, never waited for, and what it gave is kept for
 * the transaction (set_config local), for the claim to read: a claim that finds it held claims nothing this time.
 */
const LOCK_CLAIM = `SELECT set_config('studio.claim_granted', pg_try_advisory_xact_lock(hashtext('studio.task.claim'), hashtext(@kind::text))::text, true)`;
const CLAIM_GRANTED = `current_setting('studio.claim_granted', true) = 'true'`;

/** One provider's model's spend, per group of tasks (see spendByModel). */
const MODEL_SPEND = `count(*) AS tasks,
       coalesce(sum(CASE WHEN charged = 'yes' THEN cost_actual END), 0)::bigint AS billed,
       coalesce(sum(CASE WHEN charged = 'yes' AND cost_actual IS NOT NULL THEN cost_estimated END), 0)::bigint AS "estimatedForBilled",
       count(CASE WHEN charged = 'yes' AND cost_actual IS NOT NULL AND cost_estimated IS NULL THEN 1 END) AS "billedUnestimated",
       coalesce(sum(CASE WHEN charged = 'yes' AND cost_actual IS NULL THEN cost_estimated END), 0)::bigint AS "estimatedOnly",
       (coalesce(sum(CASE WHEN charged = 'maybe' THEN cost_estimated END), 0) + sum(cost_abandoned))::bigint AS "possiblyCharged"`;

const jsonOrNull = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));

/**
 * All SQL for the task table in PostgreSQL, shared by several machines. Each public method is one transaction:
 * one statement where it can be (an update and its event written together), several in `sql.tx` otherwise.
 * `machine` names this host on the files it saves.
 */
export class PostgresTaskStore implements TaskStore {
  private readonly claimable = new Set<() => void>();

  constructor(
    private readonly sql: Sql,
    private readonly machine: string = hostname(),
  ) {}

  private run<R = TaskRow>(q: Sql, text: string, params: Readonly<Record<string, unknown>> = {}): Promise<R[]> {
    const { text: numbered, values } = named(text, params);
    return q.query<R>(numbered, values);
  }

  /**
   * Calls `listener` when a write of this process may have left work to claim or a slot free (a task enqueued,
   * or one let go of: finished, requeued, released), once the write is made. Returns the unsubscribe.
   */
  onClaimable(listener: () => void): () => void {
    this.claimable.add(listener);
    return () => this.claimable.delete(listener);
  }

  private wake<T extends Task | undefined>(task: T): T {
    if (task && task.leaseOwner === null) for (const listener of this.claimable) listener();
    return task;
  }

  /**
   * Updates one row if `where` still holds and logs the transition in the same statement. Returns the updated
   * task, or undefined when the condition no longer holds (lease lost, state moved on). Wakes no one: see change.
   */
  private async transition(q: Sql, id: number, where: string, set: string, params: Record<string, unknown>, from: Status | 'kept' | 'read', t: Transition) {
    const [row] = await this.run(q, `${this.transitionWith(where, set, from, t)} SELECT * FROM changed`, this.transitionParams(id, params, from, t));
    return row && rowToTask(row);
  }

  /**
   * The WITH queries of a transition; `changed` holds the updated row. With `from` 'read', `seen` locks the row
   * and reads its status before the update runs (the update's condition waits for it): a lock returns the row's
   * latest version, which is the one the update then changes, however the row moved since the statement began.
   */
  private transitionWith(where: string, set: string, from: Status | 'kept' | 'read', t: Transition): string {
    const read = from === 'read';
    const eventFrom = from === 'kept' ? 'status' : read ? '(SELECT status FROM seen)' : '@eventFrom::text';
    return `WITH ${CLOCK}, ${t.before ? `${t.before},` : ''}
       ${read ? 'seen AS MATERIALIZED (SELECT status FROM tasks WHERE id = @id::bigint FOR NO KEY UPDATE),' : ''}
       changed AS (UPDATE tasks SET ${set}, updated_at = @now::bigint
                    WHERE id = @id::bigint AND (${where})${read ? ' AND (SELECT status FROM seen) IS NOT NULL' : ''} RETURNING *),
       event AS (INSERT INTO task_events (task_id, at, from_status, to_status, actor, reason, detail_json)
                 SELECT id, @now::bigint, ${eventFrom}, status, @eventActor::text, @eventReason::text, ${t.detailFrom ?? '@eventDetail::text'}
                   FROM changed)
       ${t.also ?? ''}`;
  }

  private transitionParams(id: number, params: Record<string, unknown>, from: Status | 'kept' | 'read', t: Transition): Record<string, unknown> {
    return { ...params, id, eventFrom: from, eventActor: t.actor, eventReason: t.reason, eventDetail: jsonOrNull(t.detail) };
  }

  /** A transition as one transaction, waking the listeners when it let go of the row. */
  private async change(id: number, where: string, set: string, params: Record<string, unknown>, t: Transition) {
    return this.wake(await this.changeIn(this.sql, id, where, set, params, t));
  }

  /**
   * A transition within `q`. One whose status is not pinned locks the row and reads it first, in a transaction:
   * the status a statement reads is the one of its start, and another machine may change the row before the
   * update reaches it.
   */
  private async changeIn(q: Sql, id: number, where: string, set: string, params: Record<string, unknown>, t: Transition) {
    if (t.from !== undefined) return this.transition(q, id, where, set, params, t.from, t);
    return q.tx(async (tx) => {
      const [row] = await this.run<{ status: Status }>(tx, `SELECT status FROM tasks WHERE id = @id::bigint FOR NO KEY UPDATE`, { id });
      return row ? this.transition(tx, id, where, set, params, row.status, t) : undefined;
    });
  }

  async enqueue(task: NewTask, now: number): Promise<Task> {
    const [row] = await this.run(
      this.sql,
      `WITH ${CLOCK},
       task AS (
         INSERT INTO tasks (project_id, kind, provider, model, input_json, input_hash, max_attempts,
                            cost_estimated, cost_estimate_source, currency, next_attempt_at, created_at, updated_at)
         VALUES (@projectId::bigint, @kind::text, @provider::text, @model::text, @input::text, @hash::text, @maxAttempts::integer,
                 @cost::bigint, @source::text, coalesce(@currency::text, 'USD'), ${DB_NOW}, @now::bigint, @now::bigint) RETURNING *),
       deps AS (INSERT INTO task_dependencies (task_id, depends_on) SELECT task.id, d FROM task, unnest(@dependsOn::bigint[]) d),
       event AS (INSERT INTO task_events (task_id, at, from_status, to_status, actor, reason)
                 SELECT id, @now::bigint, NULL, 'PENDING', 'person', 'enqueued' FROM task)
       SELECT * FROM task`,
      {
        projectId: task.projectId,
        kind: task.kind,
        provider: task.provider,
        model: task.model,
        input: JSON.stringify(task.input),
        hash: inputHash(task.provider, task.model, task.input),
        maxAttempts: task.maxAttempts ?? 5,
        cost: task.estimate?.cost ?? null,
        source: task.estimate?.source ?? null,
        currency: task.estimate?.currency ?? null,
        dependsOn: task.dependsOn ?? [],
        now,
      },
    );
    for (const listener of this.claimable) listener();
    return rowToTask(row!);
  }

  async get(id: number): Promise<Task | undefined> {
    const [row] = await this.run(this.sql, `SELECT * FROM tasks WHERE id = @id::bigint`, { id });
    return row && rowToTask(row);
  }

  async list(filter: { projectId?: number; status?: Status } = {}): Promise<Task[]> {
    const rows = await this.run(
      this.sql,
      `SELECT * FROM tasks WHERE (@projectId::bigint IS NULL OR project_id = @projectId::bigint)
         AND (@status::text IS NULL OR status = @status::text) ORDER BY id`,
      { projectId: filter.projectId ?? null, status: filter.status ?? null },
    );
    return rows.map(rowToTask);
  }

  async events(taskId: number): Promise<TaskEvent[]> {
    return (await this.run<EventRow>(this.sql, `SELECT * FROM task_events WHERE task_id = @taskId::bigint ORDER BY id`, { taskId })).map(rowToEvent);
  }

  /**
   * Claims up to the free slots of one kind in one statement, sent with the kind's claim lock in one round trip
   * (see LOCK_CLAIM): fresh work whose dependencies all succeeded,
   * submitted work nobody holds (an adopted request), and rows whose lease ran out under another owner (unless
   * `reclaimExpired` is off, as it is just after a system sleep, while the other owners renew). A SUBMITTED row
   * stays SUBMITTED, so its saved request id sends it to polling, never back through submit. The free slots are
   * the concurrency less every machine's rows of the kind under an unexpired lease, and less this owner's own
   * rows even when their lease ran out (a held lock stopped the heartbeat): they are still running here. Rows
   * another transaction holds are skipped (SKIP LOCKED), never waited for. They are locked as the UPDATE locks
   * them (FOR NO KEY UPDATE rather than FOR UPDATE): the key never changes, so an enqueue whose dependency is one
   * of them checks its foreign key without waiting, and such a row is not skipped for it.
   */
  async claim(kind: Kind, concurrency: number, leaseMs: number, lease: Lease, reclaimExpired = true): Promise<Task[]> {
    // Lock and claim in one round trip (see LOCK_CLAIM); only the ids come back, so the server's answer is small
    // enough never to wait on a stopped reader while the lock is held. The rows are read after, with no lock.
    const claimed = await this.sql.query<{ id: number }>(
      inlined(
        `${LOCK_CLAIM};
         WITH ${CLOCK},
         slots AS (
           SELECT CASE WHEN ${CLAIM_GRANTED} THEN greatest(0, @concurrency::bigint - count(*)) ELSE 0 END AS n FROM tasks
            WHERE kind = @kind::text AND ${LEASED} AND (lease_expires_at >= ${DB_NOW} OR lease_owner = @owner::text)),
         held AS (
           SELECT id FROM tasks
            WHERE kind = @kind::text AND ${LEASED} AND next_attempt_at <= ${DB_NOW}
              AND (lease_owner IS NULL OR (@reclaim::boolean AND lease_expires_at < ${DB_NOW} AND lease_owner <> @owner::text))
            ORDER BY lease_expires_at NULLS FIRST LIMIT (SELECT n FROM slots)
              FOR NO KEY UPDATE SKIP LOCKED),
         fresh AS (
           SELECT id FROM tasks t
            WHERE kind = @kind::text AND status = 'PENDING' AND next_attempt_at <= ${DB_NOW}
              AND NOT EXISTS (SELECT 1 FROM task_dependencies d JOIN tasks p ON p.id = d.depends_on
                               WHERE d.task_id = t.id AND p.status <> 'SUCCEEDED')
            ORDER BY created_at, id LIMIT (SELECT n FROM slots) - (SELECT count(*) FROM held)
              FOR NO KEY UPDATE OF t SKIP LOCKED),
         claimed AS (
           UPDATE tasks
              SET lease_owner = @owner::text, lease_expires_at = ${DB_NOW} + @leaseMs::bigint, heartbeat_at = ${DB_NOW},
                  updated_at = @now::bigint, status = CASE WHEN status = 'PENDING' THEN 'RUNNING' ELSE status END
            WHERE id IN (SELECT id FROM held UNION ALL SELECT id FROM fresh)
           RETURNING *),
         event AS (
           INSERT INTO task_events (task_id, at, from_status, to_status, actor, reason, detail_json)
           SELECT id, @now::bigint, CASE WHEN status = 'SUBMITTED' THEN 'SUBMITTED' ELSE 'PENDING' END, status, 'engine',
                  CASE WHEN status = 'SUBMITTED' THEN 'reclaimed to poll its saved request' ELSE 'claimed' END, @detail::text
             FROM claimed)
         SELECT id FROM claimed ORDER BY id`,
        // The recovery sweep requeues expired RUNNING rows before each claim, so a RUNNING row came from PENDING.
        { kind, concurrency, owner: lease.owner, now: lease.now, leaseMs, reclaim: reclaimExpired, detail: JSON.stringify({ owner: lease.owner }) },
      ),
    );
    if (claimed.length === 0) return [];
    const rows = await this.run(this.sql, `SELECT * FROM tasks WHERE id = ANY(@ids::bigint[]) AND lease_owner = @owner::text ORDER BY id`, {
      ids: claimed.map((r) => r.id),
      owner: lease.owner,
    });
    return rows.map(rowToTask);
  }

  /**
   * The boundary: written before the paid request leaves. No row changed means do not send: the lease is gone,
   * or this request would take the project past its budget.
   *
   * A project without a budget has nothing to check against the other machines' spend: one statement holds its
   * row FOR SHARE while it writes, which waits for a budget being set (and a Generate holding the project) and
   * reads the budget they leave, while the boundary writes of other machines go on beside it.
   *
   * A project with a budget is checked in a transaction of its own: the project's row is held first (FOR NO KEY
   * UPDATE: the boundary writes of one project, from every machine, wait for each other, while enqueues, whose
   * foreign key only shares the row, do not), and the write is a statement after it, so its check reads what the
   * boundary write before it committed and two machines cannot both spend the last of the budget. The lock and the
   * write go to the server as one script, which runs to its end and commits whatever the sender does meanwhile: a
   * machine stopped right after sending it holds the project for no longer than the write takes on the server (as
   * the claim does; only two flags come back, the row is read after). There the task's row is held too before the
   * write, so a refusal is told apart exactly: the budget refused it only when the row was still this owner's to
   * send. A stalled worker that lost the row is never told "budget".
   */
  async markSubmitStarted(id: number, idempotencyKey: string, leaseMs: number, lease: Lease, uploads: readonly InputUpload[] = []): Promise<BoundaryMark> {
    const where = `${FENCE} AND status = 'RUNNING' AND submit_started_at IS NULL`;
    const set = `submit_started_at = ${DB_NOW}, attempts = attempts + 1, idempotency_key = @key::text, charged = 'maybe',
         lease_expires_at = ${DB_NOW} + @leaseMs::bigint, heartbeat_at = ${DB_NOW}`;
    const params = { ...lease, key: idempotencyKey, leaseMs };
    const t: Transition = { actor: 'engine', reason: 'submit started', detail: { idempotencyKey, ...(uploads.length > 0 ? { uploads } : {}) } };
    const [first] = await this.run<Partial<TaskRow> & { budgeted: boolean }>(
      this.sql,
      `${this.transitionWith(`${where} AND NOT (SELECT budgeted FROM project)`, set, 'RUNNING', {
        ...t,
        before: `project AS MATERIALIZED (SELECT budget IS NOT NULL AS budgeted FROM projects
                                            WHERE id = (SELECT project_id FROM tasks WHERE id = @id::bigint) FOR SHARE)`,
      })}
       SELECT changed.*, coalesce((SELECT budgeted FROM project), false) AS budgeted FROM (SELECT) one LEFT JOIN changed ON true`,
      this.transitionParams(id, params, 'RUNNING', t),
    );
    if (first?.id != null) return { marked: this.wake(rowToTask(first as TaskRow)) };
    if (!first?.budgeted) return { refused: 'lease' };
    const held = { ...t, before: `held AS MATERIALIZED (SELECT id FROM tasks WHERE id = @id::bigint AND ${where} FOR NO KEY UPDATE)` };
    const [outcome] = await this.sql.query<{ held: boolean; marked: boolean }>(
      inlined(
        `SELECT 1 FROM projects WHERE id = (SELECT project_id FROM tasks WHERE id = @id::bigint) FOR NO KEY UPDATE;
         ${this.transitionWith(`${where} AND ${WITHIN_BUDGET} AND EXISTS (SELECT 1 FROM held)`, set, 'RUNNING', held)}
         SELECT EXISTS (SELECT 1 FROM held) AS held, EXISTS (SELECT 1 FROM changed) AS marked`,
        this.transitionParams(id, params, 'RUNNING', t),
      ),
    );
    if (!outcome?.held) return { refused: 'lease' };
    const task = (await this.get(id))!;
    return outcome.marked ? { marked: this.wake(task) } : { refused: 'budget', task };
  }

  /**
   * The provider named the request: the row becomes addressable. Written as soon as the id is heard (a
   * header) and again with what the whole answer adds (handle, quote), so it holds for the same id twice.
   */
  async recordSubmitted(id: number, remote: Omit<RemoteRef, 'model'> & { alias?: string | null }, estimate: { cost: number; source: string } | null, lease: Lease) {
    // Pinned to RUNNING on the hot path; the same id recorded already (a receipt replayed meanwhile) holds too.
    return (await this.submitted(id, remote, estimate, lease, 'RUNNING')) ?? this.submitted(id, remote, estimate, lease, 'SUBMITTED');
  }

  private submitted(id: number, remote: Omit<RemoteRef, 'model'> & { alias?: string | null }, estimate: { cost: number; source: string } | null, lease: Lease, from: 'RUNNING' | 'SUBMITTED') {
    return this.change(
      id,
      `${fence(lease)} AND submit_started_at IS NOT NULL AND status = '${from}'${from === 'SUBMITTED' ? ' AND remote_request_id = @requestId::text' : ''}`,
      `status = 'SUBMITTED', remote_request_id = @requestId::text, remote_handle = coalesce(@handle::text, remote_handle),
       remote_alias = coalesce(@alias::text, remote_alias), submitted_at = coalesce(submitted_at, ${DB_NOW}), charged = 'yes',
       cost_estimated = coalesce(@cost::bigint, cost_estimated), cost_estimate_source = coalesce(@source::text, cost_estimate_source)`,
      {
        ...lease,
        requestId: remote.requestId,
        alias: remote.alias ?? null,
        handle: remote.handle ? JSON.stringify(remote.handle) : null,
        cost: estimate?.cost ?? null,
        source: estimate?.source ?? null,
      },
      { from, actor: 'engine', reason: 'provider accepted the request', detail: { requestId: remote.requestId } },
    );
  }

  /**
   * A request id heard from a provider that cannot be asked about it later (a synchronous answer still
   * arriving): kept on the row, still RUNNING, so a person who must decide has it.
   */
  async noteRequestId(id: number, requestId: string, lease: Lease) {
    return this.change(
      id,
      `${fence(lease)} AND status = 'RUNNING' AND submit_started_at IS NOT NULL`,
      `remote_request_id = @requestId::text`,
      { ...lease, requestId },
      { from: 'RUNNING', actor: 'engine', reason: 'the provider named the request; its answer is still arriving', detail: { requestId } },
    );
  }

  /**
   * Records a journaled request id the row lacks (its write failed, or its process died first), for the
   * attempt it belongs to only. A row that can be polled by its id goes to SUBMITTED, from RUNNING or from an
   * unknown outcome the engine parked; any other row (cancelled, decided by a person) just keeps the id.
   * A receipt of an earlier attempt of the task (the row moved on while its id was on the way) is never dropped:
   * see lateReceipt.
   */
  async applyReceipt(receipt: Receipt, pollable: boolean, now: number) {
    const params = { ...receiptParams(receipt, now), pollable };
    const task = await this.sql.tx(async (tx) => {
      const [identity] = await this.run<{ id: string }>(tx, `SELECT id FROM database_identity`, {});
      const origin = receiptOrigin(receipt, [identity!.id]);
      if (origin === 'other') return undefined;
      await this.run(tx, LOCK_REQUEST, params);
      // An unnamed receipt (see receiptOrigin) also needs the row's send to have started before it was heard.
      const own = await this.changeIn(
        tx,
        receipt.taskId,
        `idempotency_key = @key::text AND ${SAME_TASK} AND remote_request_id IS NULL AND NOT ${HELD_ELSEWHERE}
         AND (@inputHash::text IS NOT NULL OR submit_started_at <= @at::bigint)`,
        `remote_request_id = @requestId::text, remote_alias = coalesce(@alias::text, remote_alias), remote_handle = @handle::text,
         submitted_at = coalesce(submitted_at, @at::bigint),
         charged = CASE WHEN @pollable::boolean AND status IN ('RUNNING', 'OUTCOME_UNKNOWN') THEN 'yes' ELSE charged END,
         unknown_reason = CASE WHEN @pollable::boolean AND status = 'OUTCOME_UNKNOWN' THEN NULL ELSE unknown_reason END,
         finished_at = CASE WHEN @pollable::boolean AND status = 'OUTCOME_UNKNOWN' THEN NULL ELSE finished_at END,
         next_attempt_at = CASE WHEN @pollable::boolean AND status = 'OUTCOME_UNKNOWN' THEN ${DB_NOW} ELSE next_attempt_at END,
         status = CASE WHEN @pollable::boolean AND status IN ('RUNNING', 'OUTCOME_UNKNOWN') THEN 'SUBMITTED' ELSE status END`,
        params,
        { actor: 'engine', reason: 'recorded the request id kept in the receipt journal', detail: { requestId: receipt.requestId } },
      );
      if (own || origin !== 'this') return own;
      return (await this.aheadReceipt(tx, receipt, params)) ?? this.lateReceipt(tx, receipt, params);
    });
    return this.wake(task);
  }

  /**
   * A receipt of an attempt the row has not reached: a backup of the database restored after that attempt's request
   * was sent. The row takes the request (see BEHIND_JOURNAL) and is never sent again for it.
   */
  private aheadReceipt(tx: Sql, receipt: Receipt, params: Record<string, unknown>) {
    return this.changeIn(
      tx,
      receipt.taskId,
      `attempts < @attempt::int AND ${SAME_TASK} AND remote_request_id IS NULL AND NOT ${HELD_ELSEWHERE}
       AND (status = 'PENDING' OR (status = 'RUNNING' AND submit_started_at IS NULL))`,
      `idempotency_key = @key::text, attempts = @attempt::int, remote_request_id = @requestId::text, remote_alias = @alias::text,
       remote_handle = @handle::text, submit_started_at = @at::bigint, progress = NULL, note = NULL, lease_owner = NULL, lease_expires_at = NULL, next_attempt_at = ${DB_NOW},
       status = CASE WHEN @pollable::boolean THEN 'SUBMITTED' ELSE 'OUTCOME_UNKNOWN' END,
       charged = CASE WHEN @pollable::boolean THEN 'yes' ELSE 'maybe' END,
       submitted_at = CASE WHEN @pollable::boolean THEN @at::bigint END,
       finished_at = CASE WHEN @pollable::boolean THEN NULL ELSE @now::bigint END,
       unknown_reason = CASE WHEN @pollable::boolean THEN NULL ELSE @behind::text END`,
      { ...params, behind: behindJournalReason(receipt.requestId) },
      { actor: 'engine', reason: BEHIND_JOURNAL, detail: { requestId: receipt.requestId, attempt: receipt.idempotencyKey } },
    );
  }

  async noteRivalReceipts(receipts: readonly Receipt[], now: number): Promise<void> {
    await this.sql.tx(async (tx) => {
      for (const receipt of receipts) {
        // When its id was heard, so a person can tell the rivals apart (the event's own time is the replay's).
        const detail = { requestId: receipt.requestId, attempt: receipt.idempotencyKey, heard: receipt.at, rivals: receipts.filter((r) => r !== receipt).map((r) => r.requestId) };
        await this.run(
          tx,
          `INSERT INTO task_events (task_id, at, from_status, to_status, actor, reason, detail_json)
           SELECT id, @now::bigint, status, status, 'engine', @reason::text, @detail::text FROM tasks
            WHERE id = @id::bigint AND idempotency_key = @key::text AND remote_request_id IS NULL
              AND NOT EXISTS (SELECT 1 FROM task_events e WHERE e.task_id = tasks.id AND e.reason = @reason::text
                                AND e.detail_json::json->>'requestId' = @requestId::text)`,
          { id: receipt.taskId, key: receipt.idempotencyKey, requestId: receipt.requestId, now, reason: RIVAL_RECEIPTS, detail: JSON.stringify(detail) },
        );
      }
    });
  }

  /**
   * The request of an earlier attempt, named after the row moved on (parked and resubmitted meanwhile): that attempt
   * was paid. A row whose own attempt has not been marked (PENDING after a resubmit, RUNNING not yet marked) takes
   * that request and is polled for its result instead of buying the step again (what a resubmit counted as abandoned
   * for that attempt is counted as charged now). Any other row's own attempt may have left, paid, an unknown outcome
   * included, which stays the row's to look up and ask about: a sibling task collects the earlier one (see
   * collectLate); where the provider cannot be asked by id, the row keeps it in its history, with its attempt.
   * Returns the row that took the request.
   */
  private async lateReceipt(tx: Sql, receipt: Receipt, params: Record<string, unknown>): Promise<Task | undefined> {
    // Another attempt of the task (one it marked, or one its key numbers that a row restored from an older backup never
    // marked), or the same one sent twice (two workers, the database restored between): each a paid request of this task.
    const earlier = `${SAME_TASK} AND (idempotency_key IS DISTINCT FROM @key::text OR remote_request_id IS NOT NULL) AND (${MARKED_BEFORE} OR @attempt::int > 0)`;
    const detail = { requestId: receipt.requestId, attempt: receipt.idempotencyKey };
    const taken =
      params.pollable === true
        ? await this.changeIn(
            tx,
            receipt.taskId,
            `${earlier} AND remote_request_id IS NULL AND NOT ${HELD_ELSEWHERE}
             AND (status = 'PENDING' OR (status = 'RUNNING' AND submit_started_at IS NULL))`,
            `${UNCOUNT_ABANDONED},
             status = 'SUBMITTED', idempotency_key = @key::text, remote_request_id = @requestId::text, remote_handle = @handle::text,
             submit_started_at = coalesce(submit_started_at, @at::bigint), submitted_at = @at::bigint, charged = 'yes', progress = NULL,
             unknown_reason = NULL, finished_at = NULL, note = NULL, lease_owner = NULL, lease_expires_at = NULL, next_attempt_at = ${DB_NOW}`,
            params,
            { actor: 'engine', reason: 'the request of an earlier attempt was named after the task had moved on; its result is collected', detail },
          )
        : undefined;
    const collected = taken ?? (params.pollable === true ? await this.collectLate(tx, receipt, params, earlier) : undefined);
    if (collected) return collected;
    await this.run(
      tx,
      `INSERT INTO task_events (task_id, at, from_status, to_status, actor, reason, detail_json)
       SELECT id, @now::bigint, status, status, 'engine', '${LATE_REQUEST}', @detail::text FROM tasks
        WHERE id = @id::bigint AND ${earlier} AND remote_request_id IS DISTINCT FROM @requestId::text AND NOT ${LATE_NOTED}`,
      { ...params, id: receipt.taskId, detail: JSON.stringify(detail) },
    );
    return undefined;
  }

  /**
   * A sibling task for the paid request of an earlier attempt whose row has moved on: the same step, SUBMITTED with
   * that request, polled and saved like any other; it has no dependents, the row keeps its own. Where a resubmit
   * counted that attempt's estimate as abandoned on the row, the sibling counts it now, so it is taken off there. Once only:
   * a request held by another task is never given to a second one (HELD_ELSEWHERE, under LOCK_REQUEST).
   */
  private async collectLate(tx: Sql, receipt: Receipt, params: Record<string, unknown>, earlier: string): Promise<Task | undefined> {
    const id = receipt.taskId;
    const [original] = await this.run<{ status: Status; attempt: number; same: boolean }>(
      tx,
      `SELECT status, ${ATTEMPT_NUMBER}::int AS attempt, idempotency_key IS NOT DISTINCT FROM @key::text AS same FROM tasks
        WHERE id = @id::bigint AND ${earlier} AND remote_request_id IS DISTINCT FROM @requestId::text AND NOT ${HELD_ELSEWHERE}
        FOR NO KEY UPDATE`,
      { ...params, id },
    );
    if (!original) return undefined;
    const [row] = await this.run(
      tx,
      `WITH ${CLOCK}
       INSERT INTO tasks (project_id, kind, provider, model, input_json, input_hash, max_attempts, status, charged, attempts,
                          next_attempt_at, submit_started_at, idempotency_key, remote_request_id, remote_handle, submitted_at,
                          cost_estimated, cost_estimate_source, currency, created_at, updated_at)
       SELECT project_id, kind, provider, model, input_json, input_hash, max_attempts, 'SUBMITTED', 'yes', 1,
              ${DB_NOW}, coalesce(${MARKED_AT}, @at::bigint), @key::text, @requestId::text, @handle::text, @at::bigint,
              cost_estimated, cost_estimate_source, currency, @now::bigint, @now::bigint
         FROM tasks WHERE id = @id::bigint RETURNING *`,
      { ...params, id },
    );
    const detail = { requestId: receipt.requestId, attempt: receipt.idempotencyKey };
    await this.run(
      tx,
      `WITH abandoned AS (UPDATE tasks SET ${UNCOUNT_ABANDONED}, updated_at = @now::bigint WHERE id = @id::bigint)
       INSERT INTO task_events (task_id, at, from_status, to_status, actor, reason, detail_json)
       VALUES (@id::bigint, @now::bigint, @status::text, @status::text, 'engine', @collected::text, @collectedDetail::text),
              (@sibling::bigint, @now::bigint, NULL, 'SUBMITTED', 'engine', @of::text, @ofDetail::text)`,
      {
        id,
        now: params.now,
        key: params.key,
        status: original.status,
        sibling: row!.id,
        collected: collectedWords(Number(original.attempt), original.same, Number(params.attempt), Number(row!.id)),
        collectedDetail: JSON.stringify({ ...detail, collectedAs: row!.id }),
        of: siblingWords(Number(original.attempt), original.same, Number(params.attempt), id),
        ofDetail: JSON.stringify({ ...detail, of: id }),
      },
    );
    return rowToTask(row!);
  }

  /**
   * Whether the table already holds what a receipt says, or the receipt's attempt is over. A receipt of an earlier
   * attempt of the task is settled once the row took it or its history notes it (or the sibling that collects it).
   * Another database's receipt never is, here (see receiptSettledBy).
   */
  async receiptSettled(receipt: Receipt): Promise<boolean> {
    const [identity] = await this.run<{ id: string }>(this.sql, `SELECT id FROM database_identity`, {});
    const [row] = await this.run<ReceiptRow>(
      this.sql,
      `SELECT ${SAME_TASK} AS same, idempotency_key IS NOT DISTINCT FROM @key::text AS own, remote_request_id IS NOT NULL AS named,
              remote_request_id IS NOT DISTINCT FROM @requestId::text AS holds,
              ${HELD_BY_A_TASK} OR ${LATE_NOTED} OR (@attempt::int = 0 AND NOT ${MARKED_BEFORE}) AS noted
         FROM tasks WHERE id = @id::bigint`,
      { ...receiptParams(receipt, 0), id: receipt.taskId },
    );
    return receiptSettledBy(receiptOrigin(receipt, [identity!.id]), row);
  }

  /** The catalogue's estimate, set before the boundary so spend is known even if the provider never answers. */
  async setEstimate(id: number, cost: number, source: string, currency: string, lease: Lease): Promise<boolean> {
    const rows = await this.run(
      this.sql,
      `UPDATE tasks SET cost_estimated = @cost::bigint, cost_estimate_source = @source::text, currency = @currency::text, updated_at = @now::bigint
        WHERE id = @id::bigint AND ${FENCE} RETURNING id`,
      { id, cost, source, currency, ...lease },
    );
    return rows.length === 1;
  }

  /** Saves progress (a poll's, a render's) and extends the lease in the same write. */
  async saveProgress(id: number, progress: number | null, leaseMs: number, lease: Lease): Promise<boolean> {
    const rows = await this.run(
      this.sql,
      `WITH ${CLOCK}
       UPDATE tasks SET progress = coalesce(@progress::double precision, progress), lease_expires_at = ${DB_NOW} + @leaseMs::bigint,
              heartbeat_at = ${DB_NOW}, updated_at = @now::bigint
        WHERE id = @id::bigint AND ${FENCE} AND ${LEASED} RETURNING id`,
      { id, progress, leaseMs, ...lease },
    );
    return rows.length === 1;
  }

  /** Every file of the result is linked to the task; the first is its main output. */
  async complete(id: number, out: CompletedResult, lease: Lease) {
    // One statement from either status, read in it: a polled request completes from SUBMITTED, a synchronous
    // result and a render from RUNNING.
    return this.completeWhere(this.sql, id, `${FENCE} AND ${LEASED}`, { ...lease }, out, undefined, 'read');
  }

  /**
   * Completes a row that moved on without the worker that holds its attempt's result (parked, taken by
   * another worker, cancelled or given up too late meanwhile): conditioned on the attempt, not the lease,
   * since the saved result proves the outcome and was paid for.
   * A row failed as paid with its result out of reach (a synchronous result another
   * machine could not fetch, a result expired at the provider) is completed too: that result has turned up.
   */
  async completeAttempt(id: number, idempotencyKey: string | null, out: CompletedResult, now: number) {
    return this.completeWhere(
      this.sql,
      id,
      `idempotency_key = @key::text AND (status IN ('RUNNING', 'SUBMITTED', 'OUTCOME_UNKNOWN', 'CANCELLED') OR (status = 'FAILED' AND charged IN ('maybe', 'yes')))`,
      { now, key: idempotencyKey },
      out,
      'the paid result of this attempt arrived after the task had moved on; it is kept',
    );
  }

  async linkLateOutputs(id: number, idempotencyKey: string | null, outputs: readonly SavedOutput[], reason: string, now: number): Promise<number | null> {
    return this.sql.tx(async (tx) => {
      // Locked first, so a second linker of the same row reads the files this one links.
      const held = await this.run(tx, `SELECT id FROM tasks WHERE id = @id::bigint AND status = 'SUCCEEDED' AND idempotency_key = @key::text AND output_path IS NOT NULL FOR NO KEY UPDATE`, {
        id,
        key: idempotencyKey,
      });
      if (held.length === 0) return null;
      const linked = await this.run<{ path: string; sha256: string }>(tx, `SELECT path, sha256 FROM task_outputs WHERE task_id = @id::bigint`, { id });
      const late = notLinkedYet(linked, outputs);
      if (late.length === 0) return 0;
      await this.run(
        tx,
        `WITH saved AS (
           INSERT INTO task_outputs (task_id, idx, path, sha256, machine, bytes, content_type)
           SELECT @id::bigint, (SELECT coalesce(max(idx), -1) FROM task_outputs WHERE task_id = @id::bigint) + o.n, o.path, o.sha256, @machine::text, o.bytes, o.content_type
             FROM unnest(@paths::text[], @sums::text[], @sizes::bigint[], @types::text[]) WITH ORDINALITY AS o(path, sha256, bytes, content_type, n))
         INSERT INTO task_events (task_id, at, from_status, to_status, actor, reason, detail_json)
         VALUES (@id::bigint, @now::bigint, 'SUCCEEDED', 'SUCCEEDED', 'engine', @reason::text, @detail::text)`,
        {
          id,
          now,
          reason,
          detail: jsonOrNull({ outputs: late.map((o) => o.path) }),
          paths: late.map((o) => o.path),
          sums: late.map((o) => o.sha256),
          sizes: late.map((o) => o.bytes),
          types: late.map((o) => o.contentType),
          machine: this.machine,
        },
      );
      return late.length;
    });
  }

  /**
   * A result is kept whatever request id the provider named with it: one another task of the provider holds is
   * left with that task (one request must never count for two) and said in the event. A unique index refusal
   * means another transaction took it meanwhile; the completion, run again, sees that task hold it.
   */
  private async completeWhere(q: Sql, id: number, where: string, params: Record<string, unknown>, out: CompletedResult, why?: string, from?: Status | 'read') {
    try {
      return await this.completeOnce(q, id, where, params, out, why, from);
    } catch (err) {
      if (!requestTaken(err)) throw err;
      return this.completeOnce(q, id, where, params, out, why, from);
    }
  }

  private async completeOnce(q: Sql, id: number, where: string, params: Record<string, unknown>, out: CompletedResult, why?: string, from?: Status | 'read') {
    const first = out.outputs[0]!;
    // Read before the write for the event's words only; the row's own note is decided in the write.
    const [before] = await this.run<{ kept: string | null }>(q, `SELECT CASE WHEN ${AFTER_CANCEL} THEN ${KEPT_AFTER_CANCEL} END AS kept FROM tasks WHERE id = @id::bigint`, {
      id,
      keptNote: CANCELLED_AFTER_PAID,
    });
    const task = await this.changeIn(
      q,
      id,
      where,
      `status = 'SUCCEEDED', output_path = @outputPath::text, output_sha256 = @sha256::text, progress = 1, error = NULL,
       note = CASE WHEN ${AFTER_CANCEL} THEN ${KEPT_AFTER_CANCEL} ELSE NULL END,
       unknown_reason = NULL, charged = CASE WHEN submit_started_at IS NULL THEN charged ELSE 'yes' END,
       remote_request_id = coalesce(remote_request_id, CASE WHEN EXISTS (SELECT 1 FROM taken) THEN NULL ELSE @requestId::text END),
       cost_actual_source = CASE WHEN @costActual::bigint IS NULL THEN cost_actual_source ELSE @costSource::text END,
       cost_actual = coalesce(@costActual::bigint, cost_actual), lease_owner = NULL, lease_expires_at = NULL, finished_at = @now::bigint`,
      {
        ...params,
        outputPath: first.path,
        sha256: first.sha256,
        costActual: out.costActual,
        costSource: out.costSource ?? null,
        requestId: out.requestId ?? null,
        keptNote: CANCELLED_AFTER_PAID,
        paths: out.outputs.map((o) => o.path),
        sums: out.outputs.map((o) => o.sha256),
        sizes: out.outputs.map((o) => o.bytes),
        types: out.outputs.map((o) => o.contentType),
        machine: this.machine,
      },
      {
        from,
        actor: 'engine',
        reason: before?.kept ?? why ?? (out.outputs.length > 1 ? `${out.outputs.length} outputs saved` : 'output saved'),
        before: TAKEN_REQUEST,
        detailFrom: TAKEN_DETAIL,
        also: `, saved AS (
                 INSERT INTO task_outputs (task_id, idx, path, sha256, machine, bytes, content_type)
                 SELECT changed.id, o.n - 1, o.path, o.sha256, @machine::text, o.bytes, o.content_type
                   FROM changed, unnest(@paths::text[], @sums::text[], @sizes::bigint[], @types::text[]) WITH ORDINALITY AS o(path, sha256, bytes, content_type, n)
                 ON CONFLICT (task_id, idx) DO UPDATE SET path = excluded.path, sha256 = excluded.sha256, machine = excluded.machine,
                                                          bytes = excluded.bytes, content_type = excluded.content_type)`,
      },
    );
    return this.wake(task);
  }

  async outputs(taskId: number): Promise<TaskOutput[]> {
    return (await this.run<OutputRow>(this.sql, `SELECT * FROM task_outputs WHERE task_id = @taskId::bigint ORDER BY idx`, { taskId })).map(rowToOutput);
  }

  /** What the engine is waiting on, for the person; no state changes, so no event. */
  async setNote(id: number, note: string | null, lease: Lease): Promise<boolean> {
    const rows = await this.run(this.sql, `UPDATE tasks SET note = @note::text, updated_at = @now::bigint WHERE id = @id::bigint AND ${FENCE} RETURNING id`, {
      id,
      note,
      ...lease,
    });
    return rows.length === 1;
  }

  async fail(id: number, error: string, charged: Charged, lease: Lease, cost: { amount: number; source: string } | null = null) {
    const task = await this.sql.tx(async (tx) => {
      const failed = await this.changeIn(
        tx,
        id,
        `${fence(lease)} AND ${LEASED}`,
        `status = 'FAILED', error = @error::text, charged = @charged::text, note = NULL,
         cost_actual_source = CASE WHEN @costActual::bigint IS NULL THEN cost_actual_source ELSE @costSource::text END,
         cost_actual = coalesce(@costActual::bigint, cost_actual), lease_owner = NULL, lease_expires_at = NULL, finished_at = @now::bigint`,
        { ...lease, error, charged, costActual: cost?.amount ?? null, costSource: cost?.source ?? null },
        { actor: 'engine', reason: error },
      );
      if (failed) await this.cancelDependents(tx, id, lease.now);
      return failed;
    });
    return this.wake(task);
  }

  /** Back to the queue, as if never sent: only for outcomes that prove the request was not applied. */
  async requeue(id: number, nextAttemptAt: number, reason: string, lease: Lease, detail?: unknown) {
    return this.change(
      id,
      `${fence(lease)} AND status = 'RUNNING'`,
      `status = 'PENDING', next_attempt_at = ${DUE_AT('nextAttemptAt')}, submit_started_at = NULL, idempotency_key = NULL,
       charged = 'no', lease_owner = NULL, lease_expires_at = NULL, heartbeat_at = NULL`,
      { ...lease, nextAttemptAt },
      { from: 'RUNNING', actor: 'engine', reason, detail },
    );
  }

  /** `from` pins the state the caller saw, so a row that became SUBMITTED meanwhile is never parked. */
  async parkUnknown(id: number, reason: string, lease: Lease, from: 'RUNNING' | 'SUBMITTED' = 'RUNNING') {
    return this.change(
      id,
      `${fence(lease)} AND status = @from::text`,
      `status = 'OUTCOME_UNKNOWN', unknown_reason = @reason::text, charged = 'maybe', note = NULL,
       lease_owner = NULL, lease_expires_at = NULL, finished_at = @now::bigint`,
      { ...lease, reason, from },
      { from, actor: 'engine', reason },
    );
  }

  /** Something that happened to a task without changing its status, in its history. */
  async note(id: number, reason: string, detail: unknown, now: number): Promise<void> {
    await this.run(
      this.sql,
      `INSERT INTO task_events (task_id, at, from_status, to_status, actor, reason, detail_json)
       SELECT id, @now::bigint, status, status, 'engine', @reason::text, @detail::text FROM tasks WHERE id = @id::bigint`,
      { id, now, reason, detail: jsonOrNull(detail) },
    );
  }

  /**
   * The heartbeat: one write renews the leases of the tasks an owner is working on; the ids that come
   * back tell it which it still holds. Only running work is renewed, so a row nobody works on expires.
   */
  async renewLeases(ids: readonly number[], leaseMs: number, lease: Lease): Promise<Set<number>> {
    if (ids.length === 0) return new Set();
    const rows = await this.run<{ id: number }>(
      this.sql,
      `WITH ${CLOCK}
       UPDATE tasks SET lease_expires_at = ${DB_NOW} + @leaseMs::bigint, heartbeat_at = ${DB_NOW}
        WHERE id = ANY(@ids::bigint[]) AND ${FENCE} AND ${LEASED} RETURNING id`,
      { ids, leaseMs, owner: lease.owner },
    );
    return new Set(rows.map((r) => r.id));
  }

  /** The renewal before a send: only a row still RUNNING at the attempt this owner marked. */
  async renewMarked(id: number, leaseMs: number, lease: Lease & { attempt: string }): Promise<boolean> {
    const rows = await this.run(
      this.sql,
      `WITH ${CLOCK}
       UPDATE tasks SET lease_expires_at = ${DB_NOW} + @leaseMs::bigint, heartbeat_at = ${DB_NOW}
        WHERE id = @id::bigint AND ${fence(lease)} AND status = 'RUNNING' RETURNING id`,
      { id, leaseMs, owner: lease.owner, attempt: lease.attempt },
    );
    return rows.length === 1;
  }

  /** Leased rows whose lease ran out by the database's clock (or whose owner is known dead), for the recovery sweep. */
  async expiredLeases(_now: number): Promise<Task[]> {
    const rows = await this.run(this.sql, `WITH ${CLOCK} SELECT * FROM tasks WHERE ${LEASED} AND lease_expires_at < ${DB_NOW} ORDER BY id`);
    return rows.map(rowToTask);
  }

  /**
   * Gives a row back when its executor stopped without finishing it: a submitted one is released so any
   * worker, this one included, polls it again; a running one expires for the recovery sweep to judge.
   */
  async expireLease(id: number, lease: Lease): Promise<boolean> {
    return !!(await this.change(
      id,
      `${FENCE} AND ${LEASED}`,
      `lease_owner = CASE WHEN status = 'SUBMITTED' THEN NULL ELSE lease_owner END,
       lease_expires_at = CASE WHEN status = 'SUBMITTED' THEN NULL ELSE ${DB_NOW} - 1 END`,
      { ...lease },
      { from: 'kept', actor: 'engine', reason: 'released: its worker stopped before finishing it', detail: { owner: lease.owner } },
    ));
  }

  /** Releases a submitted row to be polled again no sooner than `notBefore`, saying why on the row. */
  async retryLater(id: number, notBefore: number, note: string, lease: Lease, detail?: Record<string, unknown>): Promise<boolean> {
    return !!(await this.change(
      id,
      `${FENCE} AND status = 'SUBMITTED'`,
      `lease_owner = NULL, lease_expires_at = NULL, next_attempt_at = ${DUE_AT('notBefore')}, note = @note::text`,
      { ...lease, notBefore, note },
      { from: 'SUBMITTED', actor: 'engine', reason: note, detail: { ...detail, notBefore } },
    ));
  }

  /** Ends the leases of owners that are known to be gone, so their rows are recovered now. */
  async expireLeasesOf(owners: string[], now: number): Promise<number> {
    if (owners.length === 0) return 0;
    const [row] = await this.run<{ n: number }>(
      this.sql,
      `WITH ${CLOCK},
       expired AS (UPDATE tasks SET lease_expires_at = ${DB_NOW} - 1 WHERE lease_owner = ANY(@owners::text[]) AND ${LEASED}
                   RETURNING id, status, lease_owner),
       event AS (INSERT INTO task_events (task_id, at, from_status, to_status, actor, reason, detail_json)
                 SELECT id, @now::bigint, status, status, 'engine', 'its worker process is gone; recovering it now',
                        json_build_object('owner', lease_owner)::text
                   FROM expired)
       SELECT count(*) AS n FROM expired`,
      { owners, now },
    );
    return row!.n;
  }

  /** Back to the queue, each row only if nothing of it was sent (see recoverAll). */
  async recoverRequeueAll(tasks: readonly Task[], now: number, reason: string): Promise<Task[]> {
    return this.recoverAll(
      tasks.map((task) => ({ task, reason })),
      now,
      `submit_started_at IS NULL`,
      `status = 'PENDING', lease_owner = NULL, lease_expires_at = NULL, heartbeat_at = NULL, next_attempt_at = ${DB_NOW}`,
    );
  }

  /** Parked as unknown, each row with its own reason (see recoverAll). */
  async recoverParkAll(rows: readonly { task: Task; reason: string }[], now: number): Promise<Task[]> {
    return this.recoverAll(
      rows,
      now,
      'true',
      `status = 'OUTCOME_UNKNOWN', unknown_reason = seen.reason, charged = 'maybe', lease_owner = NULL, lease_expires_at = NULL,
       finished_at = @now::bigint`,
    );
  }

  /**
   * The recovery sweep's write over many rows, in one statement with their events. A row changes only if it is
   * still exactly as the sweep saw it (no renewal, takeover or request id in between: the same owner and expiry,
   * still RUNNING) and its lease has run out by the database's clock, whatever the caller's clock says.
   */
  private async recoverAll(rows: readonly { task: Task; reason: string }[], now: number, where: string, set: string): Promise<Task[]> {
    if (rows.length === 0) return [];
    const changed = await this.run(
      this.sql,
      `WITH ${CLOCK},
       seen AS (SELECT * FROM unnest(@ids::bigint[], @owners::text[], @expiries::bigint[], @reasons::text[]) AS s(id, owner, expiry, reason)),
       changed AS (
         UPDATE tasks SET ${set}, updated_at = @now::bigint FROM seen
          WHERE tasks.id = seen.id AND tasks.lease_owner = seen.owner AND tasks.lease_expires_at = seen.expiry
            AND tasks.lease_expires_at < ${DB_NOW} AND tasks.status = 'RUNNING' AND (${where})
         RETURNING tasks.*, seen.reason AS recovery_reason),
       event AS (INSERT INTO task_events (task_id, at, from_status, to_status, actor, reason)
                 SELECT id, @now::bigint, 'RUNNING', status, 'engine', recovery_reason FROM changed ORDER BY id)
       SELECT * FROM changed ORDER BY id`,
      {
        ids: rows.map((r) => r.task.id),
        owners: rows.map((r) => r.task.leaseOwner),
        expiries: rows.map((r) => r.task.leaseExpiresAt),
        reasons: rows.map((r) => r.reason),
        now,
      },
    );
    const tasks = changed.map(rowToTask);
    if (tasks.length > 0) for (const listener of this.claimable) listener();
    return tasks;
  }

  /** Work that will still move without a person: active rows, and pending rows not blocked by a failure. */
  async hasOutstandingWork(): Promise<boolean> {
    const rows = await this.run(
      this.sql,
      `SELECT 1 FROM tasks t WHERE status IN ('RUNNING', 'SUBMITTED')
          OR (status = 'PENDING' AND NOT EXISTS (
                SELECT 1 FROM task_dependencies d JOIN tasks p ON p.id = d.depends_on
                 WHERE d.task_id = t.id AND p.status IN ('FAILED', 'CANCELLED', 'OUTCOME_UNKNOWN')))
        LIMIT 1`,
    );
    return rows.length > 0;
  }

  /**
   * Spend per project: what the provider billed where it said, else the estimate, for accepted work;
   * requests whose outcome is unknown (and earlier attempts a person resubmitted) as possibly charged.
   */
  async spend(projectId: number | null = null): Promise<SpendRow[]> {
    return this.run<SpendRow>(
      this.sql,
      `SELECT p.id AS "projectId", p.name AS project, p.currency AS currency, p.budget AS budget,
              coalesce(sum(CASE WHEN t.charged = 'yes' THEN t.cost_actual END), 0)::bigint AS actual,
              coalesce(sum(CASE WHEN t.charged = 'yes' AND t.cost_actual IS NULL THEN t.cost_estimated END), 0)::bigint AS estimated,
              (coalesce(sum(CASE WHEN t.charged = 'maybe' THEN t.cost_estimated END), 0)
                + coalesce(sum(t.cost_abandoned), 0))::bigint AS "possiblyCharged",
              coalesce(sum(CASE WHEN t.charged = 'no' AND t.status IN ('PENDING', 'RUNNING') THEN t.cost_estimated END), 0)::bigint AS queued,
              count(CASE WHEN t.kind <> 'render' AND t.cost_actual IS NULL AND t.cost_estimated IS NULL
                          AND (t.charged <> 'no' OR t.status IN ('PENDING', 'RUNNING')) THEN 1 END) AS unpriced
         FROM projects p LEFT JOIN tasks t ON t.project_id = p.id
        WHERE @projectId::bigint IS NULL OR p.id = @projectId::bigint
        GROUP BY p.id ORDER BY p.id`,
      { projectId },
    );
  }

  /**
   * Every task of the project with this exact provider, model and input, newest first: what a Generate
   * judges a step by (one to reuse, or one paid for whose result was lost).
   */
  async withSameInput(projectId: number, hash: string): Promise<Task[]> {
    const rows = await this.run(this.sql, `SELECT * FROM tasks WHERE project_id = @projectId::bigint AND input_hash = @hash::text ORDER BY id DESC`, {
      projectId,
      hash,
    });
    return rows.map(rowToTask);
  }

  /** The task, other than `exceptTask`, that holds this request at the task's provider. */
  async requestHolder(exceptTask: number, ids: readonly string[]): Promise<Task | undefined> {
    const [row] = await this.run(
      this.sql,
      `SELECT o.* FROM tasks t JOIN tasks o ON o.provider = t.provider AND o.id <> t.id
        WHERE t.id = @exceptTask::bigint AND EXISTS (SELECT 1 FROM unnest(@ids::text[]) i
                                                       WHERE lower(o.remote_request_id) = lower(i) OR lower(o.remote_alias) = lower(i))
        ORDER BY o.id LIMIT 1`,
      { exceptTask, ids },
    );
    return row && rowToTask(row);
  }

  /** Which of these request ids already belong to a task, so reconciliation never offers another task's request. */
  async requestIdsInUse(provider: string, ids: readonly string[], exceptTask: number): Promise<Set<string>> {
    const rows = await this.run<{ id: string }>(
      this.sql,
      `SELECT c AS id FROM unnest(@ids::text[]) c
        WHERE EXISTS (SELECT 1 FROM tasks WHERE provider = @provider::text AND id <> @exceptTask::bigint
                         AND (lower(remote_request_id) = lower(c) OR lower(remote_alias) = lower(c)))`,
      { provider, ids, exceptTask },
    );
    return new Set(rows.map((r) => r.id));
  }

  /** Spend of one project per day (of the request, in UTC) and provider, for the spend chart and its CSV. */
  async spendByDay(projectId: number): Promise<DaySpend[]> {
    return this.run<DaySpend>(
      this.sql,
      `SELECT to_char(to_timestamp(coalesce(submitted_at, submit_started_at, created_at) / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, provider,
              coalesce(sum(CASE WHEN charged = 'yes' THEN cost_actual END), 0)::bigint AS actual,
              coalesce(sum(CASE WHEN charged = 'yes' AND cost_actual IS NULL THEN cost_estimated END), 0)::bigint AS estimated,
              (coalesce(sum(CASE WHEN charged = 'maybe' THEN cost_estimated END), 0) + sum(cost_abandoned))::bigint AS "possiblyCharged"
         FROM tasks WHERE project_id = @projectId::bigint AND (charged <> 'no' OR cost_abandoned > 0)
        GROUP BY 1, provider ORDER BY 1, provider`,
      { projectId },
    );
  }

  /**
   * Spend of one project per provider and model: what was billed, what those same requests had been estimated
   * at (so the estimates can be judged), what was charged with no bill, and what was possibly charged.
   */
  async spendByModel(projectId: number): Promise<ModelSpend[]> {
    return this.run<ModelSpend>(
      this.sql,
      `SELECT provider, model, ${MODEL_SPEND}
         FROM tasks WHERE project_id = @projectId::bigint AND kind <> 'render' AND (charged <> 'no' OR cost_abandoned > 0)
        GROUP BY provider, model ORDER BY provider, model`,
      { projectId },
    );
  }

  /** One page of a project's tasks, newest first, for a list that shows thousands. */
  async page(projectId: number, offset: number, limit: number): Promise<{ total: number; tasks: Task[] }> {
    const [count] = await this.run<{ n: number }>(this.sql, `SELECT count(*) AS n FROM tasks WHERE project_id = @projectId::bigint`, { projectId });
    const rows = await this.run(this.sql, `SELECT * FROM tasks WHERE project_id = @projectId::bigint ORDER BY id DESC LIMIT @limit::bigint OFFSET @offset::bigint`, {
      projectId,
      limit,
      offset,
    });
    return { total: count!.n, tasks: rows.map(rowToTask) };
  }

  /**
   * How long this model's latest successful requests took, from the provider's acceptance to the result saved,
   * in milliseconds (newest first): what polls are timed by and estimates are made from.
   */
  async recentDurations(provider: string, model: string, limit = 50): Promise<number[]> {
    const rows = await this.run<{ d: number }>(
      this.sql,
      `SELECT finished_at - submitted_at AS d FROM tasks
        WHERE provider = @provider::text AND model = @model::text AND status = 'SUCCEEDED' AND submitted_at IS NOT NULL AND finished_at >= submitted_at
        ORDER BY id DESC LIMIT @limit::bigint`,
      { provider, model, limit },
    );
    return rows.map((r) => r.d);
  }

  /**
   * How long the latest successful renders took, from their claim to the file saved (newest first): a render is
   * made by the studio, so it has no provider's acceptance to count from.
   */
  async recentRenderDurations(provider: string, model: string, limit = 50): Promise<number[]> {
    const rows = await this.run<{ d: number }>(
      this.sql,
      `SELECT d FROM (SELECT t.finished_at - (SELECT max(e.at) FROM task_events e
                                              WHERE e.task_id = t.id AND e.to_status = 'RUNNING' AND e.from_status = 'PENDING') AS d
                        FROM tasks t WHERE t.provider = @provider::text AND t.model = @model::text AND t.status = 'SUCCEEDED'
                       ORDER BY t.id DESC LIMIT @limit::bigint) latest
        WHERE d >= 0`,
      { provider, model, limit },
    );
    return rows.map((r) => r.d);
  }

  /** When each of these running tasks was last claimed: where a render's time is counted from. */
  async claimedAt(ids: readonly number[]): Promise<Map<number, number>> {
    if (ids.length === 0) return new Map();
    const rows = await this.run<{ id: number; at: number }>(
      this.sql,
      `SELECT e.task_id AS id, max(e.at) AS at FROM task_events e
        WHERE e.task_id = ANY(@ids::bigint[]) AND e.to_status = 'RUNNING' AND e.from_status = 'PENDING' GROUP BY e.task_id`,
      { ids },
    );
    return new Map(rows.map((r) => [r.id, r.at]));
  }

  /** Renders finished so far, so the desktop app can say when a new one is ready. */
  async finishedRenders(): Promise<number> {
    const [row] = await this.run<{ n: number }>(this.sql, `SELECT count(*) AS n FROM tasks WHERE kind = 'render' AND status = 'SUCCEEDED'`);
    return row!.n;
  }

  /** Tasks per status, per project. */
  async counts(): Promise<{ projectId: number; status: Status; n: number }[]> {
    return this.run(this.sql, `SELECT project_id AS "projectId", status, count(*) AS n FROM tasks GROUP BY project_id, status`);
  }

  // ---- Lookups the engine makes on its own -------------------------------------------------

  /**
   * Takes the lookups due of these providers' unknown outcomes: fewer than `maxTries` made since the task was
   * parked, none of them ending in a question for the person, the last one (or the parking) at least `intervalMs`
   * ago. Lookups are events whose detail has `lookup` (see lookupNoted); `tries` counts those of this parking.
   * A task whose request id is known is not looked up: it was parked because the provider stopped answering
   * about that request, and adopting it again would only start the same polling over, without end.
   *
   * Taking one moves its lookup_due_at an interval on, by the database's clock, in this statement: the machines of
   * a team (each with its own clock) make one lookup per task per interval between them, and each counts as one try.
   * Rows another machine is taking are skipped, and the update checks the latest version of each row again.
   */
  async dueForLookup(providers: readonly string[], maxTries: number, intervalMs: number, now: number, limit: number): Promise<{ task: Task; tries: number }[]> {
    const rows = await this.run<TaskRow & { lookup_tries: number }>(
      this.sql,
      `WITH ${CLOCK},
       due AS MATERIALIZED (
         SELECT t.id, l.tries, coalesce(l.last, t.finished_at) AS since
           FROM tasks t,
                LATERAL (SELECT count(*) FILTER (WHERE d.detail ->> 'lookup' IS NOT NULL) AS tries,
                                max(e.at) FILTER (WHERE d.detail ->> 'lookup' IS NOT NULL) AS last,
                                count(*) FILTER (WHERE d.detail ->> 'verdict' = 'ask') AS asked
                           FROM task_events e, LATERAL (SELECT e.detail_json::json AS detail) d
                          WHERE e.task_id = t.id AND e.at >= t.finished_at AND e.detail_json IS NOT NULL) l
          WHERE ${LOOKED_FOR} AND t.remote_request_id IS NULL AND t.provider = ANY(@providers::text[])
            AND (t.lookup_due_at IS NULL OR t.lookup_due_at <= ${DB_NOW})
            AND l.asked = 0 AND l.tries < @maxTries::bigint AND coalesce(l.last, t.finished_at) + @intervalMs::bigint <= @now::bigint
          ORDER BY 3 LIMIT @limit::bigint
            FOR NO KEY UPDATE OF t SKIP LOCKED),
       taken AS (
         UPDATE tasks SET lookup_due_at = ${DB_NOW} + @intervalMs::bigint FROM due
          WHERE tasks.id = due.id AND tasks.status IN ('OUTCOME_UNKNOWN', 'CANCELLED') AND (tasks.lookup_due_at IS NULL OR tasks.lookup_due_at <= ${DB_NOW})
         RETURNING tasks.*, due.tries AS lookup_tries, due.since AS lookup_since)
       SELECT * FROM taken ORDER BY lookup_since, id`,
      { providers, maxTries, intervalMs, now, limit },
    );
    return rows.map((r) => ({ task: rowToTask(r), tries: r.lookup_tries }));
  }

  /** The providers of the tasks whose outcome is unknown. */
  async unknownProviders(): Promise<string[]> {
    const rows = await this.run<{ provider: string }>(this.sql, `SELECT DISTINCT provider FROM tasks t WHERE ${LOOKED_FOR} AND t.remote_request_id IS NULL`);
    return rows.map((r) => r.provider);
  }

  /**
   * A lookup made for an unknown outcome, in its history: `detail.lookup` is its number, `detail.verdict` what came
   * of it. Kept only while the row is still that attempt's unknown outcome, so a lookup that outlived a resubmit
   * neither counts as one of the next parking's lookups nor asks the person about it.
   */
  async lookupNoted(id: number, attempt: string | null, reason: string, detail: { lookup: number; verdict: 'again' | 'ask' } & Record<string, unknown>, now: number): Promise<void> {
    await this.run(
      this.sql,
      `INSERT INTO task_events (task_id, at, from_status, to_status, actor, reason, detail_json)
       SELECT id, @now::bigint, status, status, 'engine', @reason::text, @detail::text FROM tasks t
        WHERE id = @id::bigint AND ${LOOKED_FOR} AND idempotency_key IS NOT DISTINCT FROM @attempt::text`,
      { id, attempt, reason, detail: JSON.stringify(detail), now },
    );
  }

  /**
   * Other tasks that sent this input (same provider, model and input) in a window overlapping [from, to]:
   * from their send's start to the provider's naming of the request, or to their end, or to now.
   */
  async sameInputOverlapping(task: Pick<Task, 'id' | 'inputHash'>, from: number, to: number): Promise<number[]> {
    const rows = await this.run<{ id: number }>(
      this.sql,
      `SELECT id FROM tasks WHERE input_hash = @hash::text AND id <> @id::bigint AND submit_started_at IS NOT NULL AND NOT ${ONE_KNOWN_REQUEST}
          AND submit_started_at <= @to::bigint AND coalesce(submitted_at, finished_at, @to::bigint) >= @from::bigint ORDER BY id`,
      { hash: task.inputHash, id: task.id, from, to },
    );
    return rows.map((r) => r.id);
  }

  async unendedBefore(provider: string, sentAt: number, exceptTask: number): Promise<Task[]> {
    const rows = await this.run(
      this.sql,
      `SELECT * FROM tasks WHERE provider = @provider::text AND id <> @id::bigint AND submit_started_at < @sentAt::bigint
          AND (status IN ('RUNNING', 'SUBMITTED', 'OUTCOME_UNKNOWN') OR (status IN ('SUCCEEDED', 'FAILED', 'CANCELLED') AND finished_at > @sentAt::bigint))
        ORDER BY submit_started_at, id`,
      { provider, id: exceptTask, sentAt },
    );
    return rows.map(rowToTask);
  }

  /**
   * The engine adopts the request a lookup found to be exactly the one sent (see lookupVerdict), as a person's
   * adoption does and under the same conditions, recording why and the evidence, and telling the person on the row.
   * Only for the attempt the lookup was made for (`attempt`, its idempotency key): a person may have resubmitted
   * while the lookup was under way, and what it found for the earlier send is no proof about the next one.
   */
  async adoptFound(id: number, attempt: string | null, requestId: string, why: string, evidence: Record<string, unknown>, now: number, aliases: readonly string[] = []) {
    return this.adoption(
      id,
      `status = 'OUTCOME_UNKNOWN' AND idempotency_key IS NOT DISTINCT FROM @attempt::text AND NOT ${HELD_ANY}`,
      `, note = @note::text`,
      { now, attempt, ...requestNames(requestId, aliases), note: `adopted by the studio after a lookup: request ${requestId}, ${why}` },
      { from: 'OUTCOME_UNKNOWN', actor: 'engine', reason: `adopted by the studio after a lookup: ${why}`, detail: { ...evidence, adopted: requestId } },
    );
  }

  async foundAfterCancel(id: number, attempt: string | null, requestId: string, why: string, evidence: Record<string, unknown>, now: number, aliases: readonly string[] = []) {
    const params = { now, attempt, ...requestNames(requestId, aliases) };
    const task = await this.sql.tx(async (tx) => {
      await this.run(tx, LOCK_REQUESTS, params);
      return this.changeIn(
        tx,
        id,
        `status = 'CANCELLED' AND idempotency_key IS NOT DISTINCT FROM @attempt::text AND remote_request_id IS NULL AND NOT ${HELD_ANY}`,
        `remote_request_id = @requestId::text, remote_alias = @alias::text`,
        params,
        { from: 'CANCELLED', actor: 'engine', reason: `found the request sent before the cancel after a lookup: ${why}`, detail: { ...evidence, requestId } },
      );
    });
    return this.wake(task);
  }

  // ---- A person's decisions ---------------------------------------------------------------

  /**
   * No row changed means the task moved on, or the request already belongs to another task of the same
   * provider (see requestHolder): the check is part of this write, made under the request's lock, so two
   * adoptions racing on any machines cannot both take one request, which would count one result twice and
   * drop the other task's request from the spend.
   */
  async adopt(id: number, requestId: string, now: number, aliases: readonly string[] = []) {
    return this.adoption(
      id,
      `status = 'OUTCOME_UNKNOWN' AND NOT ${HELD_ANY}`,
      '',
      { now, ...requestNames(requestId, aliases) },
      { from: 'OUTCOME_UNKNOWN', actor: 'person', reason: 'adopted a request id found at the provider', detail: { requestId } },
    );
  }

  private async adoption(id: number, where: string, alsoSet: string, params: Record<string, unknown> & ReturnType<typeof requestNames>, t: Transition) {
    const task = await this.sql.tx(async (tx) => {
      await this.run(tx, LOCK_REQUESTS, params);
      return this.changeIn(
        tx,
        id,
        where,
        `status = 'SUBMITTED', remote_request_id = @requestId::text, remote_alias = @alias::text, remote_handle = NULL, submitted_at = @now::bigint, next_attempt_at = ${DB_NOW},
         charged = 'yes', unknown_reason = NULL, finished_at = NULL, lease_owner = NULL, lease_expires_at = NULL${alsoSet}`,
        params,
        t,
      );
    });
    return this.wake(task);
  }

  async resubmit(id: number, now: number, detail?: Record<string, unknown>) {
    return this.change(
      id,
      `status = 'OUTCOME_UNKNOWN'`,
      `status = 'PENDING', cost_abandoned = cost_abandoned + coalesce(cost_estimated, 0), charged = 'no',
       submit_started_at = NULL, idempotency_key = NULL, remote_request_id = NULL, remote_alias = NULL, remote_handle = NULL, submitted_at = NULL,
       unknown_reason = NULL, finished_at = NULL, next_attempt_at = ${DB_NOW}, progress = NULL`,
      { now },
      { from: 'OUTCOME_UNKNOWN', actor: 'person', reason: RESUBMITTED, ...(detail ? { detail } : {}) },
    );
  }

  async giveUp(id: number, now: number) {
    return this.endWithDependents(id, now, didNotSucceed, (tx) =>
      this.changeIn(
        tx,
        id,
        `status = 'OUTCOME_UNKNOWN'`,
        `status = 'FAILED', error = 'given up after an unknown outcome', finished_at = @now::bigint`,
        { now },
        { from: 'OUTCOME_UNKNOWN', actor: 'person', reason: 'gave up; still counted as possibly charged' },
      ),
    );
  }

  /** Cancels a task that has not finished. The caller asks the provider to cancel a submitted one. */
  async cancel(id: number, now: number, unbilled = false) {
    return this.endWithDependents(id, now, cancelledWith, (tx) =>
      this.changeIn(
        tx,
        id,
        `status IN ('PENDING', 'RUNNING', 'SUBMITTED')`,
        `status = 'CANCELLED', finished_at = @now::bigint, lease_owner = NULL, lease_expires_at = NULL, note = NULL,
         charged = CASE WHEN @unbilled::boolean THEN 'no' WHEN charged = 'yes' THEN 'maybe' ELSE charged END`,
        { now, unbilled },
        { actor: 'person', reason: 'cancelled' },
      ),
    );
  }

  async notSentAfterCancel(id: number, attempt: string, now: number) {
    return this.change(
      id,
      `status = 'CANCELLED' AND idempotency_key = @attempt::text AND remote_request_id IS NULL AND charged = 'maybe'`,
      `charged = 'no'`,
      { now, attempt },
      { from: 'CANCELLED', actor: 'engine', reason: NOT_SENT_AFTER_CANCEL },
    );
  }

  async cancelDependentsOf(id: number, now: number): Promise<void> {
    await this.sql.tx((tx) => this.cancelDependents(tx, id, now, cancelledWith));
  }

  async followAfterCancel(id: number, requestId: string, reason: string, now: number, notBefore = now, kept?: string) {
    return this.change(
      id,
      `status = 'CANCELLED' AND remote_request_id = @requestId::text AND submit_started_at IS NOT NULL`,
      `status = 'SUBMITTED', charged = 'maybe', submitted_at = coalesce(submitted_at, @now::bigint), finished_at = NULL,
       next_attempt_at = ${DB_NOW} + greatest(0, @notBefore::bigint - @now::bigint), lease_owner = NULL, lease_expires_at = NULL, note = @reason::text`,
      { now, requestId, reason, notBefore },
      { from: 'CANCELLED', actor: 'engine', reason, detail: afterCancelDetail(requestId, kept) },
    );
  }

  async settleFollow(id: number, requestId: string, stopped: boolean, charged: Charged | null, reason: string, now: number, kept?: string) {
    return this.change(
      id,
      `status = 'SUBMITTED' AND remote_request_id = @requestId::text AND lease_owner IS NULL`,
      `status = CASE WHEN @stopped::boolean THEN 'CANCELLED' ELSE status END, charged = coalesce(@charged::text, charged),
       finished_at = CASE WHEN @stopped::boolean THEN @now::bigint ELSE finished_at END, next_attempt_at = ${DB_NOW},
       note = CASE WHEN @stopped::boolean THEN NULL ELSE @reason::text END`,
      { now, requestId, reason, stopped, charged },
      { from: 'SUBMITTED', actor: 'engine', reason, detail: afterCancelDetail(requestId, kept) },
    );
  }

  async unfollowedAfterCancel(): Promise<Task[]> {
    return (await this.run(this.sql, `SELECT * FROM tasks WHERE ${UNFOLLOWED_AFTER_CANCEL} ORDER BY id`, {})).map(rowToTask);
  }

  /** A task ended without success, and the pending work that needed it with it, as one transaction. */
  private async endWithDependents(id: number, now: number, why: (id: number) => DependentWords, end: (tx: Sql) => Promise<Task | undefined>) {
    const task = await this.sql.tx(async (tx) => {
      const ended = await end(tx);
      if (ended) await this.cancelDependents(tx, id, now, why);
      return ended;
    });
    return this.wake(task);
  }

  /** Pending work that can never run because something it needs failed or was cancelled; `why` words the error. */
  private async cancelDependents(tx: Sql, id: number, now: number, why: (id: number) => DependentWords = didNotSucceed): Promise<void> {
    const dependents = await this.run<{ id: number }>(
      tx,
      `SELECT t.id FROM task_dependencies d JOIN tasks t ON t.id = d.task_id
        WHERE d.depends_on = @id::bigint AND t.status = 'PENDING' ORDER BY t.id`,
      { id },
    );
    for (const { id: dep } of dependents) {
      const { error, reason } = why(id);
      const cancelled = await this.transition(
        tx,
        dep,
        `status = 'PENDING'`,
        `status = 'CANCELLED', error = @error::text, finished_at = @now::bigint`,
        { now, error },
        'PENDING',
        { actor: 'engine', reason, detail: { dependsOn: id } },
      );
      if (cancelled) await this.cancelDependents(tx, dep, now, why);
    }
  }

  /** The pending work a cancel of this task would cancel too (see cancelDependents), nearest first. */
  async pendingDependents(id: number): Promise<Task[]> {
    const rows = await this.run(
      this.sql,
      `WITH RECURSIVE deps(id, depth) AS (
         SELECT d.task_id, 1 FROM task_dependencies d JOIN tasks t ON t.id = d.task_id WHERE d.depends_on = @id::bigint AND t.status = 'PENDING'
         UNION
         SELECT d.task_id, deps.depth + 1 FROM deps JOIN task_dependencies d ON d.depends_on = deps.id JOIN tasks t ON t.id = d.task_id
          WHERE t.status = 'PENDING')
       SELECT t.* FROM tasks t JOIN (SELECT id, min(depth) AS depth FROM deps GROUP BY id) x ON x.id = t.id ORDER BY x.depth, t.id`,
      { id },
    );
    return rows.map(rowToTask);
  }

  /** The tasks this one was made from, and those made from it. */
  async related(id: number): Promise<{ dependsOn: Task[]; dependents: Task[] }> {
    const dependsOn = await this.run(this.sql, `SELECT t.* FROM task_dependencies d JOIN tasks t ON t.id = d.depends_on WHERE d.task_id = @id::bigint ORDER BY t.id`, { id });
    const dependents = await this.run(this.sql, `SELECT t.* FROM task_dependencies d JOIN tasks t ON t.id = d.task_id WHERE d.depends_on = @id::bigint ORDER BY t.id`, { id });
    return { dependsOn: dependsOn.map(rowToTask), dependents: dependents.map(rowToTask) };
  }

  // ---- The library: every result the studio saved, across projects ---------------------------

  /**
   * One page of saved results (finished tasks with at least one file), newest first, with the project's name.
   * A result whose files the person deleted stays listed (it was paid for); its output_path is cleared.
   */
  async library(filter: LibraryFilter, offset: number, limit: number): Promise<{ total: number; items: { task: Task; project: string; files: number }[] }> {
    const where = `t.status = 'SUCCEEDED' AND EXISTS (SELECT 1 FROM task_outputs o WHERE o.task_id = t.id)
       AND (@projectId::bigint IS NULL OR t.project_id = @projectId::bigint) AND (@kind::text IS NULL OR t.kind = @kind::text)
       AND (@provider::text IS NULL OR t.provider = @provider::text)
       AND (@from::bigint IS NULL OR t.finished_at >= @from::bigint) AND (@to::bigint IS NULL OR t.finished_at < @to::bigint)
       AND (@raw::text IS NULL OR strpos(lower(t.input_json), lower(@raw::text)) > 0)
       AND (@search::text IS NULL OR strpos(lower(coalesce(t.input_json::json ->> 'prompt', '') || ' ' || coalesce(t.input_json::json ->> 'text', '')),
                                            lower(@search::text)) > 0)`;
    const params = {
      projectId: filter.projectId ?? null,
      kind: filter.kind ?? null,
      provider: filter.provider ?? null,
      from: filter.from ?? null,
      to: filter.to ?? null,
      search: filter.search ? filter.search : null,
      // Words with no character JSON escapes appear as they are in the stored input: a plain match on its text
      // first spares parsing the JSON of every row that cannot match.
      raw: filter.search && !/["\\\u0000-\u001f]/.test(filter.search) ? filter.search : null,
    };
    const [count] = await this.run<{ n: number }>(this.sql, `SELECT count(*) AS n FROM tasks t WHERE ${where}`, params);
    const rows = await this.run<TaskRow & { project_name: string; file_count: number }>(
      this.sql,
      `SELECT t.*, p.name AS project_name, (SELECT count(*) FROM task_outputs o WHERE o.task_id = t.id) AS file_count
         FROM tasks t JOIN projects p ON p.id = t.project_id WHERE ${where}
        ORDER BY t.finished_at DESC, t.id DESC LIMIT @limit::bigint OFFSET @offset::bigint`,
      { ...params, limit, offset },
    );
    return { total: count!.n, items: rows.map((r) => ({ task: rowToTask(r), project: r.project_name, files: r.file_count })) };
  }

  /** The providers that have saved results, for the library's filter. */
  async libraryProviders(): Promise<string[]> {
    // One step per provider along the index by provider (tasks_durations), not a pass over every result.
    const rows = await this.run<{ provider: string }>(
      this.sql,
      `WITH RECURSIVE p(provider) AS (
         SELECT min(provider) FROM tasks WHERE status = 'SUCCEEDED'
         UNION ALL
         SELECT (SELECT min(provider) FROM tasks WHERE status = 'SUCCEEDED' AND provider > p.provider) FROM p WHERE p.provider IS NOT NULL)
       SELECT provider FROM p WHERE provider IS NOT NULL`,
    );
    return rows.map((r) => r.provider);
  }

  /**
   * The scene each task was made for, read from the renders that used it: a render names each scene's clip and
   * narration, and a clip names the image it was made from. The newest render wins; null when none used it.
   */
  async scenesOf(ids: readonly number[]): Promise<Map<number, string | null>> {
    if (ids.length === 0) return new Map();
    // Found through the dependency rows a Generate writes (a render depends on each clip and narration, a clip on
    // its image), so only the renders that used these tasks are read, however many renders the studio made.
    const rows = await this.run<{ id: number; scene: string | null }>(
      this.sql,
      `WITH wanted(id, n) AS (SELECT * FROM unnest(@ids::bigint[]) WITH ORDINALITY),
            part(wanted, id) AS (
              SELECT id, id FROM wanted
              UNION ALL
              SELECT w.id, c.id FROM wanted w JOIN task_dependencies d ON d.depends_on = w.id JOIN tasks c ON c.id = d.task_id
               WHERE c.kind = 'clip'),
            uses(wanted, render, scene) AS MATERIALIZED (
              SELECT p.wanted, r.id, s.value ->> 'id'
                FROM part p JOIN task_dependencies d ON d.depends_on = p.id JOIN tasks r ON r.id = d.task_id
                     CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(r.input_json::jsonb -> 'scenes') = 'array'
                                                                  THEN r.input_json::jsonb -> 'scenes' ELSE '[]'::jsonb END) s(value)
               WHERE r.kind = 'render'
                 AND (s.value -> 'clip' -> '$output' = to_jsonb(p.id) OR s.value -> 'narration' -> '$output' = to_jsonb(p.id)))
       SELECT w.id AS id, (SELECT u.scene FROM uses u WHERE u.wanted = w.id ORDER BY u.render DESC LIMIT 1) AS scene
         FROM wanted w ORDER BY w.n`,
      { ids },
    );
    return new Map(rows.map((r) => [r.id, r.scene]));
  }

  /**
   * The person deleted a result's files: the row keeps every figure of what it cost and its task_outputs, and no
   * longer names a file, so a Generate judges the step a paid result that is lost. Logged with the files removed.
   */
  async forgetOutputs(id: number, reason: string, files: string[], now: number) {
    return this.change(
      id,
      `status = 'SUCCEEDED' AND output_path IS NOT NULL`,
      `output_path = NULL, output_sha256 = NULL`,
      { now },
      { from: 'SUCCEEDED', actor: 'person', reason, detail: { deletedFiles: files } },
    );
  }

  // ---- Spend across projects ---------------------------------------------------------------

  /** spendByModel over every project, per currency (projects may keep different ones). */
  async spendByModelAll(): Promise<(ModelSpend & { currency: string })[]> {
    return this.run<ModelSpend & { currency: string }>(
      this.sql,
      `SELECT provider, model, currency, ${MODEL_SPEND}
         FROM tasks WHERE kind <> 'render' AND (charged <> 'no' OR cost_abandoned > 0)
        GROUP BY provider, model, currency ORDER BY provider, model, currency`,
    );
  }

  /** spendByDay over every project, with each row's project, for the CSV of all projects. */
  async spendByDayAll(): Promise<(DaySpend & { project: string; currency: string })[]> {
    return this.run<DaySpend & { project: string; currency: string }>(
      this.sql,
      `SELECT p.name AS project, p.currency AS currency,
              to_char(to_timestamp(coalesce(t.submitted_at, t.submit_started_at, t.created_at) / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
              t.provider AS provider,
              coalesce(sum(CASE WHEN t.charged = 'yes' THEN t.cost_actual END), 0)::bigint AS actual,
              coalesce(sum(CASE WHEN t.charged = 'yes' AND t.cost_actual IS NULL THEN t.cost_estimated END), 0)::bigint AS estimated,
              (coalesce(sum(CASE WHEN t.charged = 'maybe' THEN t.cost_estimated END), 0) + sum(t.cost_abandoned))::bigint AS "possiblyCharged"
         FROM tasks t JOIN projects p ON p.id = t.project_id WHERE t.charged <> 'no' OR t.cost_abandoned > 0
        GROUP BY p.id, 3, t.provider ORDER BY p.name, 3, t.provider`,
    );
  }
}
