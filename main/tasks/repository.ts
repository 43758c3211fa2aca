import type { Statement } from 'better-sqlite3';
import type { Db } from '../db/database.ts';
import { immediateTransactions } from '../db/transaction.ts';
import type { Actor, Charged, Kind, NewTask, RemoteRef, Status, Task, TaskEvent } from './model.ts';
import { inputHash } from './inputHash.ts';
import { rowToEvent, rowToTask, type EventRow, type TaskRow } from './rows.ts';

/** Every executor write names the lease it relies on; a write that changes no row means the lease is gone. */
export interface Lease {
  owner: string;
  now: number;
}

/** Money in micro-units of the project's currency. */
export interface SpendRow {
  projectId: number;
  project: string;
  currency: string;
  budget: number | null;
  actual: number;
  estimated: number;
  possiblyCharged: number;
}

interface Transition {
  /** The status the write's condition already pins, which spares reading it first. */
  from?: Status;
  actor: Actor;
  reason: string;
  detail?: unknown;
}

const LEASED = `status IN ('RUNNING', 'SUBMITTED')`;

/** What a project has spent or may have spent: billed, else estimated, for accepted and unknown requests. */
const PROJECT_SPEND = `(SELECT coalesce(sum(CASE WHEN s.charged <> 'no' THEN coalesce(s.cost_actual, s.cost_estimated, 0) ELSE 0 END)
                                   + sum(s.cost_abandoned), 0)
                         FROM tasks s WHERE s.project_id = tasks.project_id)`;

/** This task's estimate still fits in its project's budget (or the project has none). */
const WITHIN_BUDGET = `(SELECT CASE WHEN p.budget IS NULL THEN 1
                                    ELSE ${PROJECT_SPEND} + coalesce(tasks.cost_estimated, 0) <= p.budget END
                          FROM projects p WHERE p.id = tasks.project_id)`;
// Ownership is the fence: a takeover or a recovery changes lease_owner, and recovery writes are themselves
// conditioned on the exact lease they saw, so an owner that was only asleep may renew and carry on.
const FENCE = `lease_owner = @owner`;

/** All SQL for the task table. Each public method is one transaction. */
export class TaskRepository {
  private readonly statements = new Map<string, Statement>();

  constructor(private readonly db: Db) {
    this.tx = immediateTransactions(db);
  }

  private stmt(sql: string): Statement {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  private readonly tx: <T>(fn: () => T) => T;

  /** Runs several repository calls as one transaction: one commit, one sync, for a batch. */
  batch<T>(fn: () => T): T {
    return this.tx(fn);
  }

  private event(taskId: number, at: number, from: Status | null, to: Status, t: Transition): void {
    this.stmt(
      `INSERT INTO task_events (task_id, at, from_status, to_status, actor, reason, detail_json)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ).run(taskId, at, from, to, t.actor, t.reason, t.detail === undefined ? null : JSON.stringify(t.detail));
  }

  /**
   * Updates one row if `where` still holds and logs the transition in the same transaction.
   * Returns the updated task, or undefined when the condition no longer holds (lease lost, state moved on).
   */
  private change(id: number, where: string, set: string, params: Record<string, unknown>, t: Transition): Task | undefined {
    const now = params.now as number;
    return this.tx(() => {
      const from = t.from ?? (this.stmt(`SELECT status FROM tasks WHERE id = ?`).get(id) as { status: Status } | undefined)?.status;
      if (!from) return undefined;
      const row = this.stmt(
        `UPDATE tasks SET ${set}, updated_at = @now WHERE id = @id AND (${where}) RETURNING *`,
      ).get({ ...params, id }) as TaskRow | undefined;
      if (!row) return undefined;
      this.event(id, now, from, row.status, t);
      return rowToTask(row);
    });
  }

  enqueue(task: NewTask, now: number): Task {
    return this.tx(() => {
      const row = this.stmt(
        `INSERT INTO tasks (project_id, kind, provider, model, input_json, input_hash, max_attempts,
                            next_attempt_at, created_at, updated_at)
         VALUES (@projectId, @kind, @provider, @model, @input, @hash, @maxAttempts, @now, @now, @now) RETURNING *`,
      ).get({
        projectId: task.projectId,
        kind: task.kind,
        provider: task.provider,
        model: task.model,
        input: JSON.stringify(task.input),
        hash: inputHash(task.provider, task.model, task.input),
        maxAttempts: task.maxAttempts ?? 5,
        now,
      }) as TaskRow;
      for (const dep of task.dependsOn ?? []) {
        this.stmt(`INSERT INTO task_dependencies (task_id, depends_on) VALUES (?, ?)`).run(row.id, dep);
      }
      this.event(row.id, now, null, 'PENDING', { actor: 'person', reason: 'enqueued' });
      return rowToTask(row);
    });
  }

  get(id: number): Task | undefined {
    const row = this.stmt(`SELECT * FROM tasks WHERE id = ?`).get(id) as TaskRow | undefined;
    return row && rowToTask(row);
  }

  list(filter: { projectId?: number; status?: Status } = {}): Task[] {
    const rows = this.stmt(
      `SELECT * FROM tasks WHERE (@projectId IS NULL OR project_id = @projectId)
         AND (@status IS NULL OR status = @status) ORDER BY id`,
    ).all({ projectId: filter.projectId ?? null, status: filter.status ?? null }) as TaskRow[];
    return rows.map(rowToTask);
  }

  events(taskId: number): TaskEvent[] {
    return (this.stmt(`SELECT * FROM task_events WHERE task_id = ? ORDER BY id`).all(taskId) as EventRow[]).map(rowToEvent);
  }

  /**
   * Claims up to the free slots of one kind in one statement: fresh work whose dependencies all succeeded,
   * submitted work nobody holds (an adopted request), and rows whose lease ran out under another owner (unless `reclaimExpired` is off, as it is just after a
   * system sleep, while the other owners renew). A SUBMITTED row stays SUBMITTED, so its saved request id
   * sends it to polling, never back through submit.
   */
  claim(kind: Kind, concurrency: number, leaseMs: number, lease: Lease, reclaimExpired = true): Task[] {
    return this.tx(() => {
      const rows = this.stmt(
        `WITH slots(n) AS (
           SELECT max(0, @concurrency - count(*)) FROM tasks
            WHERE kind = @kind AND ${LEASED} AND lease_expires_at >= @now)
         UPDATE tasks
            SET lease_owner = @owner, lease_expires_at = @expires, heartbeat_at = @now, updated_at = @now,
                status = CASE WHEN status = 'PENDING' THEN 'RUNNING' ELSE status END
          WHERE id IN (SELECT id FROM (
            SELECT id FROM (SELECT id FROM tasks
                             WHERE kind = @kind AND ${LEASED} AND next_attempt_at <= @now
                               AND (lease_owner IS NULL OR (lease_expires_at < @expiredBefore AND lease_owner <> @owner))
                             ORDER BY lease_expires_at LIMIT (SELECT n FROM slots))
            UNION ALL
            SELECT id FROM (SELECT id FROM tasks t
                             WHERE kind = @kind AND status = 'PENDING' AND next_attempt_at <= @now
                               AND NOT EXISTS (SELECT 1 FROM task_dependencies d JOIN tasks p ON p.id = d.depends_on
                                                WHERE d.task_id = t.id AND p.status <> 'SUCCEEDED')
                             ORDER BY created_at, id LIMIT (SELECT n FROM slots))
          ) LIMIT (SELECT n FROM slots))
         RETURNING *`,
      ).all({
        kind,
        concurrency,
        owner: lease.owner,
        now: lease.now,
        expires: lease.now + leaseMs,
        expiredBefore: reclaimExpired ? lease.now : Number.MIN_SAFE_INTEGER,
      }) as TaskRow[];
      // The recovery sweep requeues expired RUNNING rows before each claim, so a RUNNING row came from PENDING.
      for (const row of rows) {
        this.event(row.id, lease.now, row.status === 'SUBMITTED' ? 'SUBMITTED' : 'PENDING', row.status, {
          actor: 'engine',
          reason: row.status === 'SUBMITTED' ? 'reclaimed to poll its saved request' : 'claimed',
          detail: { owner: lease.owner },
        });
      }
      return rows.map(rowToTask);
    });
  }

  /**
   * The boundary: written, and durable, before the paid request leaves. No row changed means do not send:
   * the lease is gone, or this request would take the project past its budget (see withinBudget). The
   * budget is checked in the same write, so two workers cannot both spend the last of it.
   */
  markSubmitStarted(id: number, idempotencyKey: string, leaseMs: number, lease: Lease): Task | undefined {
    return this.change(
      id,
      `${FENCE} AND status = 'RUNNING' AND submit_started_at IS NULL AND ${WITHIN_BUDGET}`,
      `submit_started_at = @now, attempts = attempts + 1, idempotency_key = @key, charged = 'maybe',
       lease_expires_at = @now + @leaseMs, heartbeat_at = @now`,
      { ...lease, key: idempotencyKey, leaseMs },
      { from: 'RUNNING', actor: 'engine', reason: 'submit started', detail: { idempotencyKey } },
    );
  }

  recordSubmitted(id: number, remote: Omit<RemoteRef, 'model'>, estimate: { cost: number; source: string } | null, lease: Lease) {
    return this.change(
      id,
      `${FENCE} AND status = 'RUNNING' AND submit_started_at IS NOT NULL`,
      `status = 'SUBMITTED', remote_request_id = @requestId, remote_handle = @handle, submitted_at = @now, charged = 'yes',
       cost_estimated = coalesce(@cost, cost_estimated), cost_estimate_source = coalesce(@source, cost_estimate_source)`,
      {
        ...lease,
        requestId: remote.requestId,
        handle: remote.handle ? JSON.stringify(remote.handle) : null,
        cost: estimate?.cost ?? null,
        source: estimate?.source ?? null,
      },
      { from: 'RUNNING', actor: 'engine', reason: 'provider accepted the request', detail: { requestId: remote.requestId } },
    );
  }

  /** The catalogue's estimate, set before the boundary so spend is known even if the provider never answers. */
  setEstimate(id: number, cost: number, source: string, currency: string, lease: Lease): boolean {
    const r = this.stmt(
      `UPDATE tasks SET cost_estimated = @cost, cost_estimate_source = @source, currency = @currency, updated_at = @now
        WHERE id = @id AND ${FENCE}`,
    ).run({ id, cost, source, currency, ...lease });
    return r.changes === 1;
  }

  /** Saves progress (a poll's, a render's) and extends the lease in the same write. */
  saveProgress(id: number, progress: number | null, leaseMs: number, lease: Lease): boolean {
    const r = this.stmt(
      `UPDATE tasks SET progress = coalesce(@progress, progress), lease_expires_at = @now + @leaseMs,
              heartbeat_at = @now, updated_at = @now
        WHERE id = @id AND ${FENCE} AND ${LEASED}`,
    ).run({ id, progress, leaseMs, ...lease });
    return r.changes === 1;
  }

  complete(id: number, out: { outputPath: string; sha256: string; costActual: number | null }, lease: Lease) {
    return this.change(
      id,
      `${FENCE} AND ${LEASED}`,
      `status = 'SUCCEEDED', output_path = @outputPath, output_sha256 = @sha256, progress = 1, error = NULL,
       cost_actual = coalesce(@costActual, cost_actual), lease_owner = NULL, lease_expires_at = NULL, finished_at = @now`,
      { ...lease, ...out },
      { actor: 'engine', reason: 'output saved' },
    );
  }

  fail(id: number, error: string, charged: Charged, lease: Lease, costActual: number | null = null) {
    const task = this.change(
      id,
      `${FENCE} AND ${LEASED}`,
      `status = 'FAILED', error = @error, charged = @charged, cost_actual = coalesce(@costActual, cost_actual),
       lease_owner = NULL, lease_expires_at = NULL, finished_at = @now`,
      { ...lease, error, charged, costActual },
      { actor: 'engine', reason: error },
    );
    if (task) this.cancelDependents(id, lease.now);
    return task;
  }

  /** Back to the queue, as if never sent: only for outcomes that prove the request was not applied. */
  requeue(id: number, nextAttemptAt: number, reason: string, lease: Lease) {
    return this.change(
      id,
      `${FENCE} AND status = 'RUNNING'`,
      `status = 'PENDING', next_attempt_at = @nextAttemptAt, submit_started_at = NULL, idempotency_key = NULL,
       charged = 'no', lease_owner = NULL, lease_expires_at = NULL, heartbeat_at = NULL`,
      { ...lease, nextAttemptAt },
      { from: 'RUNNING', actor: 'engine', reason },
    );
  }

  parkUnknown(id: number, reason: string, lease: Lease) {
    return this.change(
      id,
      `${FENCE} AND ${LEASED}`,
      `status = 'OUTCOME_UNKNOWN', unknown_reason = @reason, charged = 'maybe',
       lease_owner = NULL, lease_expires_at = NULL, finished_at = @now`,
      { ...lease, reason },
      { actor: 'engine', reason },
    );
  }

  /** A request id that reached a worker after it lost the row: kept in the log so a person can adopt it. */
  noteLateRequestId(id: number, requestId: string, now: number): void {
    this.tx(() => {
      const row = this.stmt(`SELECT status FROM tasks WHERE id = ?`).get(id) as { status: Status };
      this.event(id, now, row.status, row.status, {
        actor: 'engine',
        reason: 'a request id arrived after this worker lost the task; adopt it if the outcome is unknown',
        detail: { requestId },
      });
    });
  }

  /**
   * The heartbeat: one write renews the leases of the tasks an owner is working on; the ids that come
   * back tell it which it still holds. Only running work is renewed, so a row nobody works on expires.
   */
  renewLeases(ids: readonly number[], leaseMs: number, lease: Lease): Set<number> {
    if (ids.length === 0) return new Set();
    const rows = this.stmt(
      `UPDATE tasks SET lease_expires_at = @expires, heartbeat_at = @now
        WHERE id IN (SELECT value FROM json_each(@ids)) AND ${FENCE} AND ${LEASED} RETURNING id`,
    ).all({ ids: JSON.stringify(ids), ...lease, expires: lease.now + leaseMs }) as { id: number }[];
    return new Set(rows.map((r) => r.id));
  }

  /** Leased rows whose lease ran out (or whose owner is known dead), for the recovery sweep. */
  expiredLeases(now: number): Task[] {
    return (this.stmt(`SELECT * FROM tasks WHERE ${LEASED} AND lease_expires_at < ? ORDER BY id`).all(now) as TaskRow[]).map(
      rowToTask,
    );
  }

  /**
   * Gives a row back when its executor stopped without finishing it: a submitted one is released so any
   * worker, this one included, polls it again; a running one expires for the recovery sweep to judge.
   */
  expireLease(id: number, lease: Lease): boolean {
    return (
      this.stmt(
        `UPDATE tasks SET lease_owner = CASE WHEN status = 'SUBMITTED' THEN NULL ELSE lease_owner END,
                          lease_expires_at = CASE WHEN status = 'SUBMITTED' THEN NULL ELSE @past END
          WHERE id = @id AND ${FENCE} AND ${LEASED}`,
      ).run({ id, ...lease, past: lease.now - 1 }).changes === 1
    );
  }

  /** Releases a submitted row to be polled again no sooner than `notBefore`, saying why on the row. */
  retryLater(id: number, notBefore: number, error: string, lease: Lease): boolean {
    return (
      this.stmt(
        `UPDATE tasks SET lease_owner = NULL, lease_expires_at = NULL, next_attempt_at = @notBefore, error = @error, updated_at = @now
          WHERE id = @id AND ${FENCE} AND status = 'SUBMITTED'`,
      ).run({ id, notBefore, error, ...lease }).changes === 1
    );
  }

  /** Ends the leases of owners that are known to be gone, so their rows are recovered now. */
  expireLeasesOf(owners: string[], now: number): number {
    let n = 0;
    this.tx(() => {
      for (const owner of owners) {
        n += this.stmt(
          `UPDATE tasks SET lease_expires_at = @past WHERE lease_owner = @owner AND ${LEASED}`,
        ).run({ owner, past: now - 1 }).changes;
      }
    });
    return n;
  }

  /** Recovery writes hold only if the row is still exactly as the sweep saw it (no renewal in between). */
  recoverRequeue(task: Task, now: number, reason: string) {
    return this.change(
      task.id,
      `lease_owner = @seenOwner AND lease_expires_at = @seenExpiry AND status = 'RUNNING' AND submit_started_at IS NULL`,
      `status = 'PENDING', lease_owner = NULL, lease_expires_at = NULL, heartbeat_at = NULL, next_attempt_at = @now`,
      { now, seenOwner: task.leaseOwner, seenExpiry: task.leaseExpiresAt },
      { from: 'RUNNING', actor: 'engine', reason },
    );
  }

  recoverPark(task: Task, now: number, reason: string) {
    return this.change(
      task.id,
      `lease_owner = @seenOwner AND lease_expires_at = @seenExpiry AND status = 'RUNNING' AND remote_request_id IS NULL`,
      `status = 'OUTCOME_UNKNOWN', unknown_reason = @reason, charged = 'maybe',
       lease_owner = NULL, lease_expires_at = NULL, finished_at = @now`,
      { now, reason, seenOwner: task.leaseOwner, seenExpiry: task.leaseExpiresAt },
      { actor: 'engine', reason },
    );
  }

  /** Work that will still move without a person: active rows, and pending rows not blocked by a failure. */
  hasOutstandingWork(): boolean {
    return !!this.stmt(
      `SELECT 1 FROM tasks t WHERE status IN ('RUNNING', 'SUBMITTED')
          OR (status = 'PENDING' AND NOT EXISTS (
                SELECT 1 FROM task_dependencies d JOIN tasks p ON p.id = d.depends_on
                 WHERE d.task_id = t.id AND p.status IN ('FAILED', 'CANCELLED', 'OUTCOME_UNKNOWN')))
        LIMIT 1`,
    ).get();
  }

  /**
   * Spend per project: what the provider billed where it said, else the estimate, for accepted work;
   * requests whose outcome is unknown (and earlier attempts a person resubmitted) as possibly charged.
   */
  spend(projectId: number | null = null): SpendRow[] {
    return this.stmt(
      `SELECT p.id AS projectId, p.name AS project, p.currency AS currency, p.budget AS budget,
              coalesce(sum(CASE WHEN t.charged = 'yes' THEN t.cost_actual END), 0) AS actual,
              coalesce(sum(CASE WHEN t.charged = 'yes' AND t.cost_actual IS NULL THEN t.cost_estimated END), 0) AS estimated,
              coalesce(sum(CASE WHEN t.charged = 'maybe' THEN t.cost_estimated END), 0)
                + coalesce(sum(t.cost_abandoned), 0) AS possiblyCharged
         FROM projects p LEFT JOIN tasks t ON t.project_id = p.id
        WHERE @projectId IS NULL OR p.id = @projectId
        GROUP BY p.id ORDER BY p.id`,
    ).all({ projectId }) as SpendRow[];
  }

  /**
   * A task of the project with this exact provider, model and input that can stand in for a new one: done,
   * still under way, or waiting for a person's decision (possibly paid, so never silently bought again).
   */
  findReusable(projectId: number, hash: string): Task | undefined {
    const row = this.stmt(
      `SELECT * FROM tasks WHERE project_id = ? AND input_hash = ?
          AND status IN ('SUCCEEDED', 'PENDING', 'RUNNING', 'SUBMITTED', 'OUTCOME_UNKNOWN')
        ORDER BY status = 'SUCCEEDED' DESC, id DESC LIMIT 1`,
    ).get(projectId, hash) as TaskRow | undefined;
    return row && rowToTask(row);
  }

  /** Which of these request ids already belong to a task, so reconciliation never offers another task's request. */
  requestIdsInUse(provider: string, ids: readonly string[], exceptTask: number): Set<string> {
    const rows = this.stmt(
      `SELECT remote_request_id AS id FROM tasks
        WHERE provider = @provider AND remote_request_id IN (SELECT value FROM json_each(@ids)) AND id <> @exceptTask`,
    ).all({ provider, ids: JSON.stringify(ids), exceptTask }) as { id: string }[];
    return new Set(rows.map((r) => r.id));
  }

  /** Spend of one project per day (of the request) and provider, for the spend chart and its CSV. */
  spendByDay(projectId: number): { day: string; provider: string; actual: number; estimated: number; possiblyCharged: number }[] {
    return this.stmt(
      `SELECT date(coalesce(submitted_at, submit_started_at, created_at) / 1000, 'unixepoch') AS day, provider,
              coalesce(sum(CASE WHEN charged = 'yes' THEN cost_actual END), 0) AS actual,
              coalesce(sum(CASE WHEN charged = 'yes' AND cost_actual IS NULL THEN cost_estimated END), 0) AS estimated,
              coalesce(sum(CASE WHEN charged = 'maybe' THEN cost_estimated END), 0) + sum(cost_abandoned) AS possiblyCharged
         FROM tasks WHERE project_id = ? AND (charged <> 'no' OR cost_abandoned > 0)
        GROUP BY day, provider ORDER BY day, provider`,
    ).all(projectId) as never;
  }

  /** One page of a project's tasks, newest first, for a list that shows thousands. */
  page(projectId: number, offset: number, limit: number): { total: number; tasks: Task[] } {
    const total = this.stmt(`SELECT count(*) FROM tasks WHERE project_id = ?`).pluck().get(projectId) as number;
    const rows = this.stmt(`SELECT * FROM tasks WHERE project_id = ? ORDER BY id DESC LIMIT ? OFFSET ?`).all(projectId, limit, offset) as TaskRow[];
    return { total, tasks: rows.map(rowToTask) };
  }

  /** Renders finished so far, so the desktop app can say when a new one is ready. */
  finishedRenders(): number {
    return this.stmt(`SELECT count(*) FROM tasks WHERE kind = 'render' AND status = 'SUCCEEDED'`).pluck().get() as number;
  }

  /** Tasks per status, per project. */
  counts(): { projectId: number; status: Status; n: number }[] {
    return this.stmt(`SELECT project_id AS projectId, status, count(*) AS n FROM tasks GROUP BY project_id, status`).all() as never;
  }

  // ---- A person's decisions ---------------------------------------------------------------

  adopt(id: number, requestId: string, now: number) {
    return this.change(
      id,
      `status = 'OUTCOME_UNKNOWN'`,
      `status = 'SUBMITTED', remote_request_id = @requestId, remote_handle = NULL, submitted_at = @now, next_attempt_at = @now,
       charged = 'yes', unknown_reason = NULL, finished_at = NULL, lease_owner = NULL, lease_expires_at = NULL`,
      { now, requestId },
      { from: 'OUTCOME_UNKNOWN', actor: 'person', reason: 'adopted a request id found at the provider', detail: { requestId } },
    );
  }

  resubmit(id: number, now: number) {
    return this.change(
      id,
      `status = 'OUTCOME_UNKNOWN'`,
      `status = 'PENDING', cost_abandoned = cost_abandoned + coalesce(cost_estimated, 0), charged = 'no',
       submit_started_at = NULL, idempotency_key = NULL, remote_request_id = NULL, remote_handle = NULL, submitted_at = NULL,
       unknown_reason = NULL, finished_at = NULL, next_attempt_at = @now, progress = NULL`,
      { now },
      { from: 'OUTCOME_UNKNOWN', actor: 'person', reason: 'resubmitted: the earlier attempt may also have been charged' },
    );
  }

  giveUp(id: number, now: number) {
    const task = this.change(
      id,
      `status = 'OUTCOME_UNKNOWN'`,
      `status = 'FAILED', error = 'given up after an unknown outcome', finished_at = @now`,
      { now },
      { from: 'OUTCOME_UNKNOWN', actor: 'person', reason: 'gave up; still counted as possibly charged' },
    );
    if (task) this.cancelDependents(id, now);
    return task;
  }

  /** Cancels a task that has not finished. The caller asks the provider to cancel a submitted one. */
  cancel(id: number, now: number) {
    const task = this.change(
      id,
      `status IN ('PENDING', 'RUNNING', 'SUBMITTED')`,
      `status = 'CANCELLED', finished_at = @now, lease_owner = NULL, lease_expires_at = NULL,
       charged = CASE WHEN charged = 'yes' THEN 'maybe' ELSE charged END`,
      { now },
      { actor: 'person', reason: 'cancelled' },
    );
    if (task) this.cancelDependents(id, now);
    return task;
  }

  /** Pending work that can never run because something it needs failed or was cancelled. */
  private cancelDependents(id: number, now: number): void {
    const dependents = this.stmt(
      `SELECT t.id FROM task_dependencies d JOIN tasks t ON t.id = d.task_id
        WHERE d.depends_on = ? AND t.status = 'PENDING'`,
    ).all(id) as { id: number }[];
    for (const { id: dep } of dependents) {
      const cancelled = this.change(
        dep,
        `status = 'PENDING'`,
        `status = 'CANCELLED', error = @error, finished_at = @now`,
        { now, error: `task ${id}, which this one needs, did not succeed` },
        { from: 'PENDING', actor: 'engine', reason: 'a task it depends on did not succeed', detail: { dependsOn: id } },
      );
      if (cancelled) this.cancelDependents(dep, now);
    }
  }
}
