import type { Statement } from 'better-sqlite3';
import { hostname } from 'node:os';
import type { Db } from '../../db/database.ts';
import { immediateTransactions } from '../../db/transaction.ts';
import type { Receipt, SavedOutput } from '../../ports.ts';
import type { Actor, Charged, Kind, NewTask, RemoteRef, Status, Task, TaskEvent, TaskOutput } from '../../tasks/model.ts';
import { inputHash } from '../../tasks/inputHash.ts';
import { requestHeldDetail, requestNames } from '../../tasks/requestHeld.ts';
import { afterCancelDetail, CANCELLED_AFTER_PAID, NOT_SENT_AFTER_CANCEL } from '../../tasks/cancelledAfterPaid.ts';
import { cancelledWith, didNotSucceed, type DependentWords } from '../../tasks/dependentWords.ts';
import { rowToEvent, rowToOutput, rowToTask, type EventRow, type OutputRow, type TaskRow } from '../../tasks/rows.ts';
import { refuseIfMoved, refuseIfTaskMoved } from './projectMoves.ts';
import type { BoundaryMark, CompletedResult, DaySpend, InputUpload, Lease, LibraryFilter, ModelSpend, SpendRow, TaskStore } from '../port.ts';
import { BEHIND_JOURNAL, behindJournalReason, collectedWords, receiptOrigin, receiptParams, receiptSettledBy, RIVAL_RECEIPTS, siblingWords, type ReceiptRow } from '../receiptParams.ts';
import { databaseIdsOf } from './databaseId.ts';
import { notLinkedYet } from '../lateOutputs.ts';

interface Transition {
  /** The status the write's condition already pins, which spares reading it first. */
  from?: Status;
  actor: Actor;
  reason: string;
  detail?: unknown;
  /** More writes that belong to the same transition, in its transaction. */
  then?: (task: Task) => void;
}

const LEASED = `status IN ('RUNNING', 'SUBMITTED')`;

/** What a project has spent or may have spent: billed, else estimated, for accepted and unknown requests. */
const PROJECT_SPEND = `(SELECT coalesce(sum(CASE WHEN s.charged <> 'no' THEN coalesce(s.cost_actual, s.cost_estimated, 0) ELSE 0 END)
                                   + sum(s.cost_abandoned), 0)
                         FROM tasks s WHERE s.project_id = tasks.project_id)`;

/**
 * This task's estimate still fits in its project's budget (or the project has none). A task of unknown price (the
 * person confirmed it) is never counted as 0: it goes only while something of the budget is left.
 */
const WITHIN_BUDGET = `(SELECT CASE WHEN p.budget IS NULL THEN 1
                                    WHEN tasks.cost_estimated IS NULL THEN ${PROJECT_SPEND} < p.budget
                                    ELSE ${PROJECT_SPEND} + tasks.cost_estimated <= p.budget END
                          FROM projects p WHERE p.id = tasks.project_id)`;

/** One provider's model's spend, per group of tasks (see spendByModel). */
const MODEL_SPEND = `count(*) AS tasks,
       coalesce(sum(CASE WHEN charged = 'yes' THEN cost_actual END), 0) AS billed,
       coalesce(sum(CASE WHEN charged = 'yes' AND cost_actual IS NOT NULL THEN cost_estimated END), 0) AS estimatedForBilled,
       count(CASE WHEN charged = 'yes' AND cost_actual IS NOT NULL AND cost_estimated IS NULL THEN 1 END) AS billedUnestimated,
       coalesce(sum(CASE WHEN charged = 'yes' AND cost_actual IS NULL THEN cost_estimated END), 0) AS estimatedOnly,
       coalesce(sum(CASE WHEN charged = 'maybe' THEN cost_estimated END), 0) + sum(cost_abandoned) AS possiblyCharged`;

// Ownership is the fence: a takeover or a recovery changes lease_owner, and recovery writes are themselves
// conditioned on the exact lease they saw, so an owner that was only asleep may renew and carry on.
const FENCE = `lease_owner = @owner`;

/** A write after the boundary mark also names the attempt it marked (see Lease.attempt). */
const fence = (lease: Lease) => (lease.attempt === undefined ? FENCE : `${FENCE} AND idempotency_key = @attempt`);

/**
 * A task that sent one request only and holds its id: a listed request of another id is not its own, so it makes no
 * lookup of the same input ambiguous (its own is marked taken there).
 */
const ONE_KNOWN_REQUEST = `(remote_request_id IS NOT NULL AND attempts = 1)`;

/** When the task marked attempt @key: the send time of that attempt's request, whenever its id was heard. */
const MARKED_AT = `(SELECT max(e.at) FROM task_events e WHERE e.task_id = tasks.id AND e.reason = 'submit started'
                      AND json_extract(e.detail_json, '$.idempotencyKey') = @key)`;

/** @key is an attempt this task marked (its boundary event names it), not a stray key. */
const MARKED_BEFORE = `EXISTS (SELECT 1 FROM task_events e WHERE e.task_id = tasks.id AND e.reason = 'submit started'
                                 AND json_extract(e.detail_json, '$.idempotencyKey') = @key)`;

/** Which of the task's marked attempts @key is: 1 for the first, 0 when the task never marked it. */
const ATTEMPT_NUMBER = `(SELECT count(*) FROM task_events e WHERE e.task_id = tasks.id AND e.reason = 'submit started'
                          AND e.id <= (SELECT min(m.id) FROM task_events m WHERE m.task_id = tasks.id AND m.reason = 'submit started'
                                                                              AND json_extract(m.detail_json, '$.idempotencyKey') = @key))`;

/**
 * Attempt @key was counted in the row's abandoned amount: a person resubmitted the row after it was marked, before any
 * later attempt was (the resubmit adds the estimate to cost_abandoned; a retry of the engine adds nothing).
 */
const RESUBMITTED = 'resubmitted: the earlier attempt may also have been charged';
const ABANDONED_AT_KEY = `(SELECT e.reason FROM task_events e WHERE e.task_id = tasks.id AND e.reason IN ('submit started', '${RESUBMITTED}')
                             AND e.id > (SELECT min(m.id) FROM task_events m WHERE m.task_id = tasks.id AND m.reason = 'submit started'
                                                                                 AND json_extract(m.detail_json, '$.idempotencyKey') = @key)
                           ORDER BY e.id LIMIT 1) IS '${RESUBMITTED}'`;
const UNCOUNT_ABANDONED = `cost_abandoned = CASE WHEN ${ABANDONED_AT_KEY} THEN max(0, cost_abandoned - coalesce(cost_estimated, 0)) ELSE cost_abandoned END`;

/**
 * The history of a row that moved on keeps the request of an earlier attempt named after it, or the task that
 * collects it (see applyReceipt).
 */
const LATE_REQUEST = 'the request of an earlier attempt was named after the task had moved on; that attempt may have been charged';
const LATE_NOTED = `EXISTS (SELECT 1 FROM task_events e WHERE e.task_id = tasks.id AND json_extract(e.detail_json, '$.requestId') = @requestId
                              AND (e.reason = '${LATE_REQUEST}' OR json_extract(e.detail_json, '$.collectedAs') IS NOT NULL))`;

/**
 * Another task of the same provider already holds @requestId, as its id or its other name (remote_alias). Compared
 * without case: providers print their ids in one case, but a person may type another, and one request must never
 * count for two tasks.
 */
const HELD_ELSEWHERE = `EXISTS (SELECT 1 FROM tasks o WHERE o.provider = tasks.provider AND o.id <> tasks.id
                                  AND (lower(o.remote_request_id) IN (lower(@requestId), lower(@alias)) OR lower(o.remote_alias) IN (lower(@requestId), lower(@alias))))`;

/** Some task of the same provider, this one included, holds @requestId as its id or its other name (see receiptSettledBy). */
const HELD_BY_A_TASK = `EXISTS (SELECT 1 FROM tasks o WHERE o.provider = tasks.provider
                                  AND (lower(o.remote_request_id) = lower(@requestId) OR lower(o.remote_alias) = lower(@requestId)))`;

/** The row is the task a receipt names (see receiptOrigin): always, for a receipt that names none. */
const SAME_TASK = `(@inputHash IS NULL OR (input_hash = @inputHash AND created_at = @createdAt))`;

/** Another task of the same provider holds any of @ids (a JSON array): every name the provider gives one request. */
const HELD_ANY = `EXISTS (SELECT 1 FROM tasks o, json_each(@ids) i WHERE o.provider = tasks.provider AND o.id <> tasks.id
                            AND (lower(o.remote_request_id) = lower(i.value) OR lower(o.remote_alias) = lower(i.value)))`;

/** The person cancelled this task after its request was paid for: still cancelled, or followed since (see followAfterCancel). */
const AFTER_CANCEL = `(status = 'CANCELLED' OR EXISTS (SELECT 1 FROM task_events e WHERE e.task_id = tasks.id AND json_extract(e.detail_json, '$.afterCancel') = 1
                                                       AND json_extract(e.detail_json, '$.requestId') IS tasks.remote_request_id))`;

/**
 * A cancelled row holding a request named after its cancel that nothing followed or settled since (its process died
 * between the two): no event of that request before the cancel, none after it saying what became of it.
 */
const UNFOLLOWED_AFTER_CANCEL = `status = 'CANCELLED' AND remote_request_id IS NOT NULL AND submit_started_at IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM task_events e WHERE e.task_id = tasks.id AND json_extract(e.detail_json, '$.requestId') = tasks.remote_request_id
                    AND (json_extract(e.detail_json, '$.afterCancel') = 1 OR e.reason LIKE 'request % arrived after the cancel;%'
                         OR e.id < (SELECT max(c.id) FROM task_events c WHERE c.task_id = tasks.id AND c.actor = 'person' AND c.reason = 'cancelled')))`;

/**
 * A row whose request is looked for at the provider (see dueForLookup), as `t`: an unknown outcome, or a task cancelled
 * while its request was being sent, which may have left and be charged.
 */
const LOOKED_FOR = `(t.status = 'OUTCOME_UNKNOWN' OR (t.status = 'CANCELLED' AND t.submit_started_at IS NOT NULL AND t.charged = 'maybe' AND t.idempotency_key IS NOT NULL))`;

/** The words a task cancelled after its request was paid for ends with: the latest said for its request (see afterCancelDetail), else @keptNote. */
const KEPT_AFTER_CANCEL = `coalesce((SELECT json_extract(e.detail_json, '$.kept') FROM task_events e WHERE e.task_id = tasks.id AND json_extract(e.detail_json, '$.afterCancel') = 1
                                        AND json_extract(e.detail_json, '$.kept') IS NOT NULL AND json_extract(e.detail_json, '$.requestId') IS tasks.remote_request_id
                                      ORDER BY e.id DESC LIMIT 1), @keptNote)`;

/**
 * All SQL for the task table in SQLite. Each public method is one transaction, committed when its promise resolves.
 * `machine` names this machine on the files it saves.
 */
export class SqliteTaskStore implements TaskStore {
  private readonly statements = new Map<string, Statement>();
  private readonly claimable = new Set<() => void>();

  constructor(
    private readonly db: Db,
    private readonly machine: string = hostname(),
  ) {
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

  /**
   * Calls `listener` when a write of this process may have left work to claim or a slot free (a task enqueued,
   * or one let go of: finished, requeued, released). It is called inside the write's transaction, so it must
   * only schedule its work for later. Returns the unsubscribe.
   */
  onClaimable(listener: () => void): () => void {
    this.claimable.add(listener);
    return () => this.claimable.delete(listener);
  }

  private wake(): void {
    for (const listener of this.claimable) listener();
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
      const task = rowToTask(row);
      t.then?.(task);
      if (row.lease_owner === null) this.wake();
      return task;
    });
  }

  async enqueue(task: NewTask, now: number): Promise<Task> {
    return this.tx(() => {
      refuseIfMoved(this.db, task.projectId);
      const row = this.stmt(
        `INSERT INTO tasks (project_id, kind, provider, model, input_json, input_hash, max_attempts,
                            cost_estimated, cost_estimate_source, currency, next_attempt_at, created_at, updated_at)
         VALUES (@projectId, @kind, @provider, @model, @input, @hash, @maxAttempts,
                 @cost, @source, coalesce(@currency, 'USD'), @now, @now, @now) RETURNING *`,
      ).get({
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
        now,
      }) as TaskRow;
      for (const dep of task.dependsOn ?? []) {
        this.stmt(`INSERT INTO task_dependencies (task_id, depends_on) VALUES (?, ?)`).run(row.id, dep);
      }
      this.event(row.id, now, null, 'PENDING', { actor: 'person', reason: 'enqueued' });
      this.wake();
      return rowToTask(row);
    });
  }

  async get(id: number): Promise<Task | undefined> {
    const row = this.stmt(`SELECT * FROM tasks WHERE id = ?`).get(id) as TaskRow | undefined;
    return row && rowToTask(row);
  }

  async list(filter: { projectId?: number; status?: Status } = {}): Promise<Task[]> {
    const rows = this.stmt(
      `SELECT * FROM tasks WHERE (@projectId IS NULL OR project_id = @projectId)
         AND (@status IS NULL OR status = @status) ORDER BY id`,
    ).all({ projectId: filter.projectId ?? null, status: filter.status ?? null }) as TaskRow[];
    return rows.map(rowToTask);
  }

  async events(taskId: number): Promise<TaskEvent[]> {
    return (this.stmt(`SELECT * FROM task_events WHERE task_id = ? ORDER BY id`).all(taskId) as EventRow[]).map(rowToEvent);
  }

  /**
   * Claims up to the free slots of one kind in one statement: fresh work whose dependencies all succeeded,
   * submitted work nobody holds (an adopted request), and rows whose lease ran out under another owner (unless `reclaimExpired` is off, as it is just after a
   * system sleep, while the other owners renew). A SUBMITTED row stays SUBMITTED, so its saved request id
   * sends it to polling, never back through submit. This owner's own rows hold their slots even when their
   * lease ran out (a held lock stopped the heartbeat): they are still running here.
   */
  async claim(kind: Kind, concurrency: number, leaseMs: number, lease: Lease, reclaimExpired = true): Promise<Task[]> {
    return this.tx(() => {
      const rows = this.stmt(
        `WITH slots(n) AS (
           SELECT max(0, @concurrency - count(*)) FROM tasks
            WHERE kind = @kind AND ${LEASED} AND (lease_expires_at >= @now OR lease_owner = @owner))
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
   * budget is checked in the same write, so two workers cannot both spend the last of it. Which of the two
   * refused it is told apart in the same transaction: a stalled worker that lost the row is never told "budget".
   */
  async markSubmitStarted(id: number, idempotencyKey: string, leaseMs: number, lease: Lease, uploads: readonly InputUpload[] = []): Promise<BoundaryMark> {
    const sendable = `${FENCE} AND status = 'RUNNING' AND submit_started_at IS NULL`;
    return this.tx((): BoundaryMark => {
      const marked = this.change(
        id,
        `${sendable} AND ${WITHIN_BUDGET}`,
        `submit_started_at = @now, attempts = attempts + 1, idempotency_key = @key, charged = 'maybe',
         lease_expires_at = @now + @leaseMs, heartbeat_at = @now`,
        { ...lease, key: idempotencyKey, leaseMs },
        { from: 'RUNNING', actor: 'engine', reason: 'submit started', detail: { idempotencyKey, ...(uploads.length > 0 ? { uploads } : {}) } },
      );
      if (marked) return { marked };
      const held = this.stmt(`SELECT * FROM tasks WHERE id = @id AND ${sendable}`).get({ id, ...lease }) as TaskRow | undefined;
      return held ? { refused: 'budget', task: rowToTask(held) } : { refused: 'lease' };
    });
  }

  /**
   * The provider named the request: the row becomes addressable. Written as soon as the id is heard (a
   * header) and again with what the whole answer adds (handle, quote), so it holds for the same id twice.
   */
  async recordSubmitted(id: number, remote: Omit<RemoteRef, 'model'> & { alias?: string | null }, estimate: { cost: number; source: string } | null, lease: Lease) {
    // Pinned to RUNNING on the hot path; the same id recorded already (a receipt replayed meanwhile) holds too.
    return this.submitted(id, remote, estimate, lease, 'RUNNING') ?? this.submitted(id, remote, estimate, lease, 'SUBMITTED');
  }

  private submitted(id: number, remote: Omit<RemoteRef, 'model'> & { alias?: string | null }, estimate: { cost: number; source: string } | null, lease: Lease, from: Status) {
    return this.change(
      id,
      `${fence(lease)} AND submit_started_at IS NOT NULL AND status = @from AND (@from = 'RUNNING' OR remote_request_id = @requestId)`,
      `status = 'SUBMITTED', remote_request_id = @requestId, remote_handle = coalesce(@handle, remote_handle),
       remote_alias = coalesce(@alias, remote_alias), submitted_at = coalesce(submitted_at, @now), charged = 'yes',
       cost_estimated = coalesce(@cost, cost_estimated), cost_estimate_source = coalesce(@source, cost_estimate_source)`,
      {
        ...lease,
        requestId: remote.requestId,
        alias: remote.alias ?? null,
        handle: remote.handle ? JSON.stringify(remote.handle) : null,
        cost: estimate?.cost ?? null,
        source: estimate?.source ?? null,
        from,
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
      `remote_request_id = @requestId`,
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
    const params = { ...receiptParams(receipt, now), pollable: pollable ? 1 : 0 };
    return this.tx(() => {
      const origin = receiptOrigin(receipt, databaseIdsOf(this.db));
      if (origin === 'other') return undefined;
      const own = this.ownReceipt(receipt, params);
      if (own || origin !== 'this') return own;
      return this.aheadReceipt(receipt, params) ?? this.lateReceipt(receipt, params);
    });
  }

  /**
   * A receipt of an attempt the row has not reached: a backup of the database restored after that attempt's request
   * was sent. The row takes the request (see BEHIND_JOURNAL) and is never sent again for it.
   */
  private aheadReceipt(receipt: Receipt, params: Record<string, unknown>) {
    return this.change(
      receipt.taskId,
      `attempts < @attempt AND ${SAME_TASK} AND remote_request_id IS NULL AND NOT ${HELD_ELSEWHERE}
       AND (status = 'PENDING' OR (status = 'RUNNING' AND submit_started_at IS NULL))`,
      `idempotency_key = @key, attempts = @attempt, remote_request_id = @requestId, remote_alias = @alias, remote_handle = @handle,
       submit_started_at = @at, progress = NULL, note = NULL, lease_owner = NULL, lease_expires_at = NULL, next_attempt_at = @now,
       status = CASE WHEN @pollable THEN 'SUBMITTED' ELSE 'OUTCOME_UNKNOWN' END,
       charged = CASE WHEN @pollable THEN 'yes' ELSE 'maybe' END,
       submitted_at = CASE WHEN @pollable THEN @at END,
       finished_at = CASE WHEN @pollable THEN NULL ELSE @now END,
       unknown_reason = CASE WHEN @pollable THEN NULL ELSE @behind END`,
      { ...params, behind: behindJournalReason(receipt.requestId) },
      { actor: 'engine', reason: BEHIND_JOURNAL, detail: { requestId: receipt.requestId, attempt: receipt.idempotencyKey } },
    );
  }

  async noteRivalReceipts(receipts: readonly Receipt[], now: number): Promise<void> {
    this.tx(() => {
      for (const receipt of receipts) {
        // When its id was heard, so a person can tell the rivals apart (the event's own time is the replay's).
        const detail = { requestId: receipt.requestId, attempt: receipt.idempotencyKey, heard: receipt.at, rivals: receipts.filter((r) => r !== receipt).map((r) => r.requestId) };
        this.stmt(
          `INSERT INTO task_events (task_id, at, from_status, to_status, actor, reason, detail_json)
           SELECT id, @now, status, status, 'engine', @reason, @detail FROM tasks
            WHERE id = @id AND idempotency_key = @key AND remote_request_id IS NULL
              AND NOT EXISTS (SELECT 1 FROM task_events e WHERE e.task_id = tasks.id AND e.reason = @reason
                                AND json_extract(e.detail_json, '$.requestId') = @requestId)`,
        ).run({ id: receipt.taskId, key: receipt.idempotencyKey, requestId: receipt.requestId, now, reason: RIVAL_RECEIPTS, detail: JSON.stringify(detail) });
      }
    });
  }

  /** An unnamed receipt (see receiptOrigin) also needs the row's send to have started before it was heard. */
  private ownReceipt(receipt: Receipt, params: Record<string, unknown>) {
    return this.change(
      receipt.taskId,
      `idempotency_key = @key AND ${SAME_TASK} AND remote_request_id IS NULL AND NOT ${HELD_ELSEWHERE}
       AND (@inputHash IS NOT NULL OR submit_started_at <= @at)`,
      `remote_request_id = @requestId, remote_alias = coalesce(@alias, remote_alias), remote_handle = @handle,
       submitted_at = coalesce(submitted_at, @at),
       charged = CASE WHEN @pollable AND status IN ('RUNNING', 'OUTCOME_UNKNOWN') THEN 'yes' ELSE charged END,
       unknown_reason = CASE WHEN @pollable AND status = 'OUTCOME_UNKNOWN' THEN NULL ELSE unknown_reason END,
       finished_at = CASE WHEN @pollable AND status = 'OUTCOME_UNKNOWN' THEN NULL ELSE finished_at END,
       next_attempt_at = CASE WHEN @pollable AND status = 'OUTCOME_UNKNOWN' THEN @now ELSE next_attempt_at END,
       status = CASE WHEN @pollable AND status IN ('RUNNING', 'OUTCOME_UNKNOWN') THEN 'SUBMITTED' ELSE status END`,
      params,
      { actor: 'engine', reason: 'recorded the request id kept in the receipt journal', detail: { requestId: receipt.requestId } },
    );
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
  private lateReceipt(receipt: Receipt, params: Record<string, unknown>): Task | undefined {
    // Another attempt of the task (one it marked, or one its key numbers that a row restored from an older backup never
    // marked), or the same one sent twice (two workers, the database restored between): each a paid request of this task.
    const earlier = `${SAME_TASK} AND (idempotency_key IS NOT @key OR remote_request_id IS NOT NULL) AND (${MARKED_BEFORE} OR @attempt > 0)`;
    const detail = { requestId: receipt.requestId, attempt: receipt.idempotencyKey };
    const taken =
      params.pollable === 1
        ? this.change(
            receipt.taskId,
            `${earlier} AND remote_request_id IS NULL AND NOT ${HELD_ELSEWHERE}
             AND (status = 'PENDING' OR (status = 'RUNNING' AND submit_started_at IS NULL))`,
            `${UNCOUNT_ABANDONED},
             status = 'SUBMITTED', idempotency_key = @key, remote_request_id = @requestId, remote_handle = @handle,
             submit_started_at = coalesce(submit_started_at, @at), submitted_at = @at, charged = 'yes', progress = NULL,
             unknown_reason = NULL, finished_at = NULL, note = NULL, lease_owner = NULL, lease_expires_at = NULL, next_attempt_at = @now`,
            params,
            { actor: 'engine', reason: 'the request of an earlier attempt was named after the task had moved on; its result is collected', detail },
          )
        : undefined;
    const collected = taken ?? (params.pollable === 1 ? this.collectLate(receipt, params, earlier) : undefined);
    if (collected) return collected;
    this.stmt(
      `INSERT INTO task_events (task_id, at, from_status, to_status, actor, reason, detail_json)
       SELECT id, @now, status, status, 'engine', '${LATE_REQUEST}', @detail FROM tasks
        WHERE id = @id AND ${earlier} AND remote_request_id IS NOT @requestId AND NOT ${LATE_NOTED}`,
    ).run({ ...params, id: receipt.taskId, detail: JSON.stringify(detail) });
    return undefined;
  }

  /**
   * A sibling task for the paid request of an earlier attempt whose row has moved on: the same step, SUBMITTED with
   * that request, polled and saved like any other; it has no dependents, the row keeps its own. Where a resubmit
   * counted that attempt's estimate as abandoned on the row, the sibling counts it now, so it is taken off there. Once only:
   * a request held by another task is never given to a second one (HELD_ELSEWHERE).
   */
  private collectLate(receipt: Receipt, params: Record<string, unknown>, earlier: string): Task | undefined {
    const original = this.stmt(
      `SELECT status, ${ATTEMPT_NUMBER} AS attempt, idempotency_key IS @key AS same FROM tasks
        WHERE id = @id AND ${earlier} AND remote_request_id IS NOT @requestId AND NOT ${HELD_ELSEWHERE}`,
    ).get({ ...params, id: receipt.taskId }) as { status: Status; attempt: number; same: number } | undefined;
    if (!original) return undefined;
    const row = this.stmt(
      `INSERT INTO tasks (project_id, kind, provider, model, input_json, input_hash, max_attempts, status, charged, attempts,
                          next_attempt_at, submit_started_at, idempotency_key, remote_request_id, remote_handle, submitted_at,
                          cost_estimated, cost_estimate_source, currency, created_at, updated_at)
       SELECT project_id, kind, provider, model, input_json, input_hash, max_attempts, 'SUBMITTED', 'yes', 1,
              @now, coalesce(${MARKED_AT}, @at), @key, @requestId, @handle, @at, cost_estimated, cost_estimate_source, currency, @now, @now
         FROM tasks WHERE id = @id RETURNING *`,
    ).get({ ...params, id: receipt.taskId }) as TaskRow;
    this.stmt(`UPDATE tasks SET ${UNCOUNT_ABANDONED}, updated_at = @now WHERE id = @id`).run({
      ...params,
      id: receipt.taskId,
    });
    const detail = { requestId: receipt.requestId, attempt: receipt.idempotencyKey };
    this.event(receipt.taskId, params.now as number, original.status, original.status, {
      actor: 'engine',
      reason: collectedWords(original.attempt, original.same === 1, params.attempt as number, row.id),
      detail: { ...detail, collectedAs: row.id },
    });
    this.event(row.id, params.now as number, null, 'SUBMITTED', {
      actor: 'engine',
      reason: siblingWords(original.attempt, original.same === 1, params.attempt as number, receipt.taskId),
      detail: { ...detail, of: receipt.taskId },
    });
    this.wake();
    return rowToTask(row);
  }

  /**
   * Whether the table already holds what a receipt says, or the receipt's attempt is over. A receipt of an earlier
   * attempt of the task is settled once the row took it or its history notes it (or the sibling that collects it).
   * Another database's receipt never is, here (see receiptSettledBy).
   */
  async receiptSettled(receipt: Receipt): Promise<boolean> {
    const row = this.stmt(
      `SELECT ${SAME_TASK} AS same, idempotency_key IS @key AS own, remote_request_id IS NOT NULL AS named, remote_request_id IS @requestId AS holds,
              ${HELD_BY_A_TASK} OR ${LATE_NOTED} OR (@attempt = 0 AND NOT ${MARKED_BEFORE}) AS noted
         FROM tasks WHERE id = @id`,
    ).get({ ...receiptParams(receipt, 0), id: receipt.taskId }) as Record<keyof ReceiptRow, number> | undefined;
    const read = row && { same: row.same === 1, own: row.own === 1, named: row.named === 1, holds: row.holds === 1, noted: row.noted === 1 };
    return receiptSettledBy(receiptOrigin(receipt, databaseIdsOf(this.db)), read);
  }

  /** The catalogue's estimate, set before the boundary so spend is known even if the provider never answers. */
  async setEstimate(id: number, cost: number, source: string, currency: string, lease: Lease): Promise<boolean> {
    const r = this.stmt(
      `UPDATE tasks SET cost_estimated = @cost, cost_estimate_source = @source, currency = @currency, updated_at = @now
        WHERE id = @id AND ${FENCE}`,
    ).run({ id, cost, source, currency, ...lease });
    return r.changes === 1;
  }

  /** Saves progress (a poll's, a render's) and extends the lease in the same write. */
  async saveProgress(id: number, progress: number | null, leaseMs: number, lease: Lease): Promise<boolean> {
    const r = this.stmt(
      `UPDATE tasks SET progress = coalesce(@progress, progress), lease_expires_at = @now + @leaseMs,
              heartbeat_at = @now, updated_at = @now
        WHERE id = @id AND ${FENCE} AND ${LEASED}`,
    ).run({ id, progress, leaseMs, ...lease });
    return r.changes === 1;
  }

  /** Every file of the result is linked to the task; the first is its main output. */
  async complete(id: number, out: CompletedResult, lease: Lease) {
    // Pinned to the status of the usual path (a polled request), which spares reading it first; a synchronous
    // result and a render complete from RUNNING.
    return (
      this.completeWhere(id, `${FENCE} AND status = 'SUBMITTED'`, { ...lease }, out, undefined, 'SUBMITTED') ??
      this.completeWhere(id, `${FENCE} AND status = 'RUNNING'`, { ...lease }, out, undefined, 'RUNNING')
    );
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
      id,
      `idempotency_key = @key AND (status IN ('RUNNING', 'SUBMITTED', 'OUTCOME_UNKNOWN', 'CANCELLED') OR (status = 'FAILED' AND charged IN ('maybe', 'yes')))`,
      { now, key: idempotencyKey },
      out,
      'the paid result of this attempt arrived after the task had moved on; it is kept',
    );
  }

  async linkLateOutputs(id: number, idempotencyKey: string | null, outputs: readonly SavedOutput[], reason: string, now: number): Promise<number | null> {
    return this.tx(() => {
      const row = this.stmt(`SELECT 1 FROM tasks WHERE id = ? AND status = 'SUCCEEDED' AND idempotency_key = ? AND output_path IS NOT NULL`).get(id, idempotencyKey);
      if (!row) return null;
      const linked = this.stmt(`SELECT path, sha256 FROM task_outputs WHERE task_id = ?`).all(id) as { path: string; sha256: string }[];
      const late = notLinkedYet(linked, outputs);
      for (const o of late) {
        this.stmt(
          `INSERT INTO task_outputs (task_id, idx, path, sha256, bytes, content_type, machine)
           SELECT @id, coalesce(max(idx), -1) + 1, @path, @sha256, @bytes, @contentType, @machine FROM task_outputs WHERE task_id = @id`,
        ).run({ id, path: o.path, sha256: o.sha256, bytes: o.bytes, contentType: o.contentType, machine: this.machine });
      }
      if (late.length > 0) this.event(id, now, 'SUCCEEDED', 'SUCCEEDED', { actor: 'engine', reason, detail: { outputs: late.map((o) => o.path) } });
      return late.length;
    });
  }

  /**
   * A result is kept whatever request id the provider named with it: one another task of the provider holds is
   * left with that task (one request must never count for two) and said in the event.
   */
  private completeWhere(id: number, where: string, params: Record<string, unknown>, out: CompletedResult, why?: string, from?: Status) {
    const first = out.outputs[0]!;
    const named = out.requestId ?? null;
    const write = (heldBy: number | undefined) =>
      this.change(
        id,
        where,
        `status = 'SUCCEEDED', output_path = @outputPath, output_sha256 = @sha256, progress = 1, error = NULL,
         note = CASE WHEN ${AFTER_CANCEL} THEN ${KEPT_AFTER_CANCEL} ELSE NULL END,
         unknown_reason = NULL, charged = CASE WHEN submit_started_at IS NULL THEN charged ELSE 'yes' END,
         remote_request_id = coalesce(remote_request_id, @requestId),
         cost_actual_source = CASE WHEN @costActual IS NULL THEN cost_actual_source ELSE @costSource END,
         cost_actual = coalesce(@costActual, cost_actual), lease_owner = NULL, lease_expires_at = NULL, finished_at = @now`,
        { ...params, outputPath: first.path, sha256: first.sha256, costActual: out.costActual, costSource: out.costSource ?? null, requestId: heldBy === undefined ? named : null, keptNote: CANCELLED_AFTER_PAID },
        {
          from,
          actor: 'engine',
          reason: this.keptAfterCancel(id) ?? why ?? (out.outputs.length > 1 ? `${out.outputs.length} outputs saved` : 'output saved'),
          detail: heldBy === undefined ? undefined : requestHeldDetail(named!, heldBy),
          then: () => {
            for (const [index, o] of out.outputs.entries()) {
              this.stmt(
                `INSERT OR REPLACE INTO task_outputs (task_id, idx, path, sha256, bytes, content_type, machine) VALUES (?, ?, ?, ?, ?, ?, ?)`,
              ).run(id, index, o.path, o.sha256, o.bytes, o.contentType, this.machine);
            }
          },
        },
      );
    return this.tx(() => write(named === null ? undefined : this.takenRequest(id, named)));
  }

  /** What the task says when the person cancelled it after its request was paid for (AFTER_CANCEL), read in the completion's transaction. */
  private keptAfterCancel(id: number): string | null {
    return (this.stmt(`SELECT CASE WHEN ${AFTER_CANCEL} THEN ${KEPT_AFTER_CANCEL} END FROM tasks WHERE id = @id`).pluck().get({ id, keptNote: CANCELLED_AFTER_PAID }) as string | null) ?? null;
  }

  /** The other task of this task's provider that holds `requestId`, when this task has none of its own to keep. */
  private takenRequest(id: number, requestId: string): number | undefined {
    return this.stmt(
      `SELECT o.id FROM tasks t JOIN tasks o ON o.provider = t.provider AND lower(o.remote_request_id) = lower(@requestId) AND o.id <> t.id
        WHERE t.id = @id AND t.remote_request_id IS NULL ORDER BY o.id LIMIT 1`,
    )
      .pluck()
      .get({ id, requestId }) as number | undefined;
  }

  async outputs(taskId: number): Promise<TaskOutput[]> {
    return (this.stmt(`SELECT * FROM task_outputs WHERE task_id = ? ORDER BY idx`).all(taskId) as OutputRow[]).map(rowToOutput);
  }

  /** What the engine is waiting on, for the person; no state changes, so no event. */
  async setNote(id: number, note: string | null, lease: Lease): Promise<boolean> {
    return this.stmt(`UPDATE tasks SET note = @note, updated_at = @now WHERE id = @id AND ${FENCE}`).run({ id, note, ...lease }).changes === 1;
  }

  async fail(id: number, error: string, charged: Charged, lease: Lease, cost: { amount: number; source: string } | null = null) {
    const task = this.change(
      id,
      `${fence(lease)} AND ${LEASED}`,
      `status = 'FAILED', error = @error, charged = @charged, note = NULL,
       cost_actual_source = CASE WHEN @costActual IS NULL THEN cost_actual_source ELSE @costSource END,
       cost_actual = coalesce(@costActual, cost_actual), lease_owner = NULL, lease_expires_at = NULL, finished_at = @now`,
      { ...lease, error, charged, costActual: cost?.amount ?? null, costSource: cost?.source ?? null },
      { actor: 'engine', reason: error },
    );
    if (task) this.cancelDependents(id, lease.now);
    return task;
  }

  /** Back to the queue, as if never sent: only for outcomes that prove the request was not applied. */
  async requeue(id: number, nextAttemptAt: number, reason: string, lease: Lease, detail?: unknown) {
    return this.change(
      id,
      `${fence(lease)} AND status = 'RUNNING'`,
      `status = 'PENDING', next_attempt_at = @nextAttemptAt, submit_started_at = NULL, idempotency_key = NULL,
       charged = 'no', lease_owner = NULL, lease_expires_at = NULL, heartbeat_at = NULL`,
      { ...lease, nextAttemptAt },
      { from: 'RUNNING', actor: 'engine', reason, detail },
    );
  }

  /** `from` pins the state the caller saw, so a row that became SUBMITTED meanwhile is never parked. */
  async parkUnknown(id: number, reason: string, lease: Lease, from: 'RUNNING' | 'SUBMITTED' = 'RUNNING') {
    return this.change(
      id,
      `${fence(lease)} AND status = @from`,
      `status = 'OUTCOME_UNKNOWN', unknown_reason = @reason, charged = 'maybe', note = NULL,
       lease_owner = NULL, lease_expires_at = NULL, finished_at = @now`,
      { ...lease, reason, from },
      { from, actor: 'engine', reason },
    );
  }

  /** Something that happened to a task without changing its status, in its history. */
  async note(id: number, reason: string, detail: unknown, now: number): Promise<void> {
    this.tx(() => {
      const row = this.stmt(`SELECT status FROM tasks WHERE id = ?`).get(id) as { status: Status } | undefined;
      if (row) this.event(id, now, row.status, row.status, { actor: 'engine', reason, detail });
    });
  }

  /**
   * The heartbeat: one write renews the leases of the tasks an owner is working on; the ids that come
   * back tell it which it still holds. Only running work is renewed, so a row nobody works on expires.
   */
  async renewLeases(ids: readonly number[], leaseMs: number, lease: Lease): Promise<Set<number>> {
    if (ids.length === 0) return new Set();
    const rows = this.stmt(
      `UPDATE tasks SET lease_expires_at = @expires, heartbeat_at = @now
        WHERE id IN (SELECT value FROM json_each(@ids)) AND ${FENCE} AND ${LEASED} RETURNING id`,
    ).all({ ids: JSON.stringify(ids), ...lease, expires: lease.now + leaseMs }) as { id: number }[];
    return new Set(rows.map((r) => r.id));
  }

  /** The renewal before a send: only a row still RUNNING at the attempt this owner marked. */
  async renewMarked(id: number, leaseMs: number, lease: Lease & { attempt: string }): Promise<boolean> {
    return (
      this.stmt(`UPDATE tasks SET lease_expires_at = @now + @leaseMs, heartbeat_at = @now WHERE id = @id AND ${fence(lease)} AND status = 'RUNNING'`).run({
        id,
        leaseMs,
        ...lease,
      }).changes === 1
    );
  }

  /** Leased rows whose lease ran out (or whose owner is known dead), for the recovery sweep. */
  async expiredLeases(now: number): Promise<Task[]> {
    return (this.stmt(`SELECT * FROM tasks WHERE ${LEASED} AND lease_expires_at < ? ORDER BY id`).all(now) as TaskRow[]).map(
      rowToTask,
    );
  }

  /**
   * Gives a row back when its executor stopped without finishing it: a submitted one is released so any
   * worker, this one included, polls it again; a running one expires for the recovery sweep to judge.
   */
  async expireLease(id: number, lease: Lease): Promise<boolean> {
    return !!this.change(
      id,
      `${FENCE} AND ${LEASED}`,
      `lease_owner = CASE WHEN status = 'SUBMITTED' THEN NULL ELSE lease_owner END,
       lease_expires_at = CASE WHEN status = 'SUBMITTED' THEN NULL ELSE @past END`,
      { ...lease, past: lease.now - 1 },
      { actor: 'engine', reason: 'released: its worker stopped before finishing it', detail: { owner: lease.owner } },
    );
  }

  /** Releases a submitted row to be polled again no sooner than `notBefore`, saying why on the row. */
  async retryLater(id: number, notBefore: number, note: string, lease: Lease, detail?: Record<string, unknown>): Promise<boolean> {
    return !!this.change(
      id,
      `${FENCE} AND status = 'SUBMITTED'`,
      `lease_owner = NULL, lease_expires_at = NULL, next_attempt_at = @notBefore, note = @note`,
      { ...lease, notBefore, note },
      { from: 'SUBMITTED', actor: 'engine', reason: note, detail: { ...detail, notBefore } },
    );
  }

  /** Ends the leases of owners that are known to be gone, so their rows are recovered now. */
  async expireLeasesOf(owners: string[], now: number): Promise<number> {
    return this.tx(() => {
      let n = 0;
      for (const owner of owners) {
        const rows = this.stmt(
          `UPDATE tasks SET lease_expires_at = @past WHERE lease_owner = @owner AND ${LEASED} RETURNING id, status`,
        ).all({ owner, past: now - 1 }) as { id: number; status: Status }[];
        for (const row of rows) {
          this.event(row.id, now, row.status, row.status, { actor: 'engine', reason: 'its worker process is gone; recovering it now', detail: { owner } });
        }
        n += rows.length;
      }
      return n;
    });
  }

  /** Back to the queue, each row only if nothing of it was sent (see recoverAll). */
  async recoverRequeueAll(tasks: readonly Task[], now: number, reason: string): Promise<Task[]> {
    return this.recoverAll(
      tasks.map((task) => ({ task, reason })),
      now,
      `submit_started_at IS NULL`,
      `status = 'PENDING', lease_owner = NULL, lease_expires_at = NULL, heartbeat_at = NULL, next_attempt_at = @now`,
    );
  }

  /** Parked as unknown, each row with its own reason (see recoverAll). */
  async recoverParkAll(rows: readonly { task: Task; reason: string }[], now: number): Promise<Task[]> {
    return this.recoverAll(
      rows,
      now,
      '1',
      `status = 'OUTCOME_UNKNOWN', unknown_reason = @reason, charged = 'maybe', lease_owner = NULL, lease_expires_at = NULL, finished_at = @now`,
    );
  }

  /**
   * The recovery sweep's write over many rows, in one transaction with their events. A row changes only if it is
   * still exactly as the sweep saw it (no renewal, takeover or request id in between: the same owner and expiry,
   * still RUNNING) and its lease has run out by `now`.
   */
  private recoverAll(rows: readonly { task: Task; reason: string }[], now: number, where: string, set: string): Task[] {
    if (rows.length === 0) return [];
    const update = this.stmt(
      `UPDATE tasks SET ${set}, updated_at = @now
        WHERE id = @id AND lease_owner = @seenOwner AND lease_expires_at = @seenExpiry AND lease_expires_at < @now
          AND status = 'RUNNING' AND (${where}) RETURNING *`,
    );
    return this.tx(() => {
      const changed: Task[] = [];
      for (const { task, reason } of rows) {
        const row = update.get({ id: task.id, seenOwner: task.leaseOwner, seenExpiry: task.leaseExpiresAt, reason, now }) as TaskRow | undefined;
        if (!row) continue;
        this.event(task.id, now, 'RUNNING', row.status, { actor: 'engine', reason });
        changed.push(rowToTask(row));
      }
      if (changed.length > 0) this.wake();
      return changed;
    });
  }

  /** Work that will still move without a person: active rows, and pending rows not blocked by a failure. */
  async hasOutstandingWork(): Promise<boolean> {
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
  async spend(projectId: number | null = null): Promise<SpendRow[]> {
    return this.stmt(
      `SELECT p.id AS projectId, p.name AS project, p.currency AS currency, p.budget AS budget,
              coalesce(sum(CASE WHEN t.charged = 'yes' THEN t.cost_actual END), 0) AS actual,
              coalesce(sum(CASE WHEN t.charged = 'yes' AND t.cost_actual IS NULL THEN t.cost_estimated END), 0) AS estimated,
              coalesce(sum(CASE WHEN t.charged = 'maybe' THEN t.cost_estimated END), 0)
                + coalesce(sum(t.cost_abandoned), 0) AS possiblyCharged,
              coalesce(sum(CASE WHEN t.charged = 'no' AND t.status IN ('PENDING', 'RUNNING') THEN t.cost_estimated END), 0) AS queued,
              count(CASE WHEN t.kind <> 'render' AND t.cost_actual IS NULL AND t.cost_estimated IS NULL
                          AND (t.charged <> 'no' OR t.status IN ('PENDING', 'RUNNING')) THEN 1 END) AS unpriced
         FROM projects p LEFT JOIN tasks t ON t.project_id = p.id
        WHERE @projectId IS NULL OR p.id = @projectId
        GROUP BY p.id ORDER BY p.id`,
    ).all({ projectId }) as SpendRow[];
  }

  /**
   * Every task of the project with this exact provider, model and input, newest first: what a Generate
   * judges a step by (one to reuse, or one paid for whose result was lost).
   */
  async withSameInput(projectId: number, hash: string): Promise<Task[]> {
    const rows = this.stmt(`SELECT * FROM tasks WHERE project_id = ? AND input_hash = ? ORDER BY id DESC`).all(projectId, hash) as TaskRow[];
    return rows.map(rowToTask);
  }

  /** The task, other than `exceptTask`, that holds this request at the task's provider, by any of the names in `ids`. */
  async requestHolder(exceptTask: number, ids: readonly string[]): Promise<Task | undefined> {
    const row = this.stmt(
      `SELECT o.* FROM tasks t JOIN tasks o ON o.provider = t.provider AND o.id <> t.id
        WHERE t.id = @exceptTask AND EXISTS (SELECT 1 FROM json_each(@ids) i
                                               WHERE lower(o.remote_request_id) = lower(i.value) OR lower(o.remote_alias) = lower(i.value))
        ORDER BY o.id LIMIT 1`,
    ).get({ exceptTask, ids: JSON.stringify(ids) }) as TaskRow | undefined;
    return row && rowToTask(row);
  }

  /** Which of these request ids already belong to a task, so reconciliation never offers another task's request. */
  async requestIdsInUse(provider: string, ids: readonly string[], exceptTask: number): Promise<Set<string>> {
    const rows = this.stmt(
      `SELECT c.value AS id FROM json_each(@ids) c
        WHERE EXISTS (SELECT 1 FROM tasks WHERE provider = @provider AND id <> @exceptTask
                         AND (lower(remote_request_id) = lower(c.value) OR lower(remote_alias) = lower(c.value)))`,
    ).all({ provider, ids: JSON.stringify(ids), exceptTask }) as { id: string }[];
    return new Set(rows.map((r) => r.id));
  }


  /** Spend of one project per day (of the request) and provider, for the spend chart and its CSV. */
  async spendByDay(projectId: number): Promise<DaySpend[]> {
    return this.stmt(
      `SELECT date(coalesce(submitted_at, submit_started_at, created_at) / 1000, 'unixepoch') AS day, provider,
              coalesce(sum(CASE WHEN charged = 'yes' THEN cost_actual END), 0) AS actual,
              coalesce(sum(CASE WHEN charged = 'yes' AND cost_actual IS NULL THEN cost_estimated END), 0) AS estimated,
              coalesce(sum(CASE WHEN charged = 'maybe' THEN cost_estimated END), 0) + sum(cost_abandoned) AS possiblyCharged
         FROM tasks WHERE project_id = ? AND (charged <> 'no' OR cost_abandoned > 0)
        GROUP BY day, provider ORDER BY day, provider`,
    ).all(projectId) as never;
  }

  /**
   * Spend of one project per provider and model: what was billed, what those same requests had been estimated
   * at (so the estimates can be judged), what was charged with no bill, and what was possibly charged.
   */
  async spendByModel(projectId: number): Promise<ModelSpend[]> {
    return this.stmt(
      `SELECT provider, model, ${MODEL_SPEND}
         FROM tasks WHERE project_id = ? AND kind <> 'render' AND (charged <> 'no' OR cost_abandoned > 0)
        GROUP BY provider, model ORDER BY provider, model`,
    ).all(projectId) as ModelSpend[];
  }

  /** One page of a project's tasks, newest first, for a list that shows thousands. */
  async page(projectId: number, offset: number, limit: number): Promise<{ total: number; tasks: Task[] }> {
    const total = this.stmt(`SELECT count(*) FROM tasks WHERE project_id = ?`).pluck().get(projectId) as number;
    const rows = this.stmt(`SELECT * FROM tasks WHERE project_id = ? ORDER BY id DESC LIMIT ? OFFSET ?`).all(projectId, limit, offset) as TaskRow[];
    return { total, tasks: rows.map(rowToTask) };
  }

  /**
   * How long this model's latest successful requests took on this machine, from the provider's acceptance to
   * the result saved, in milliseconds (newest first): what polls are timed by and estimates are made from.
   */
  async recentDurations(provider: string, model: string, limit = 50): Promise<number[]> {
    return this.stmt(
      `SELECT finished_at - submitted_at FROM tasks
        WHERE provider = ? AND model = ? AND status = 'SUCCEEDED' AND submitted_at IS NOT NULL AND finished_at >= submitted_at
        ORDER BY id DESC LIMIT ?`,
    )
      .pluck()
      .all(provider, model, limit) as number[];
  }

  /**
   * How long the latest successful renders took on this machine, from their claim to the file saved (newest
   * first): a render is made here, so it has no provider's acceptance to count from.
   */
  async recentRenderDurations(provider: string, model: string, limit = 50): Promise<number[]> {
    return this.stmt(
      `SELECT d FROM (SELECT t.finished_at - (SELECT max(e.at) FROM task_events e
                                              WHERE e.task_id = t.id AND e.to_status = 'RUNNING' AND e.from_status = 'PENDING') AS d
                        FROM tasks t WHERE t.provider = ? AND t.model = ? AND t.status = 'SUCCEEDED' ORDER BY t.id DESC LIMIT ?)
        WHERE d >= 0`,
    )
      .pluck()
      .all(provider, model, limit) as number[];
  }

  /** When each of these running tasks was last claimed: where a render's time is counted from. */
  async claimedAt(ids: readonly number[]): Promise<Map<number, number>> {
    if (ids.length === 0) return new Map();
    const rows = this.stmt(
      `SELECT e.task_id AS id, max(e.at) AS at FROM json_each(@ids) w CROSS JOIN task_events e
        WHERE e.task_id = w.value AND e.to_status = 'RUNNING' AND e.from_status = 'PENDING' GROUP BY e.task_id`,
    ).all({ ids: JSON.stringify(ids) }) as { id: number; at: number }[];
    return new Map(rows.map((r) => [r.id, r.at]));
  }

  /** Renders finished so far, so the desktop app can say when a new one is ready. */
  async finishedRenders(): Promise<number> {
    return this.stmt(`SELECT count(*) FROM tasks WHERE kind = 'render' AND status = 'SUCCEEDED'`).pluck().get() as number;
  }

  /** Tasks per status, per project. */
  async counts(): Promise<{ projectId: number; status: Status; n: number }[]> {
    return this.stmt(`SELECT project_id AS projectId, status, count(*) AS n FROM tasks GROUP BY project_id, status`).all() as never;
  }

  // ---- Lookups the engine makes on its own -------------------------------------------------

  /**
   * Takes the lookups due of these providers' unknown outcomes: fewer than `maxTries` made since the task was
   * parked, none of them ending in a question for the person, the last one (or the parking) at least `intervalMs`
   * ago. Lookups are events whose detail has `lookup` (see lookupNoted); `tries` counts those of this parking.
   * A task whose request id is known is not looked up: it was parked because the provider stopped answering
   * about that request, and adopting it again would only start the same polling over, without end.
   *
   * Taking one moves its lookup_due_at an interval on, in the same transaction: the processes sharing this file
   * (a worker and the app) make one lookup per task per interval between them, and each counts as one try.
   */
  async dueForLookup(providers: readonly string[], maxTries: number, intervalMs: number, now: number, limit: number): Promise<{ task: Task; tries: number }[]> {
    return this.tx(() => {
      const rows = this.stmt(
        `SELECT * FROM (
           SELECT t.*,
                  (SELECT count(*) FROM task_events e WHERE e.task_id = t.id AND e.at >= t.finished_at
                      AND json_extract(e.detail_json, '$.lookup') IS NOT NULL) AS lookup_tries,
                  (SELECT max(e.at) FROM task_events e WHERE e.task_id = t.id AND e.at >= t.finished_at
                      AND json_extract(e.detail_json, '$.lookup') IS NOT NULL) AS lookup_last,
                  (SELECT count(*) FROM task_events e WHERE e.task_id = t.id AND e.at >= t.finished_at
                      AND json_extract(e.detail_json, '$.verdict') = 'ask') AS lookup_asked
             FROM tasks t
            WHERE ${LOOKED_FOR} AND t.remote_request_id IS NULL AND t.provider IN (SELECT value FROM json_each(@providers))
              AND (t.lookup_due_at IS NULL OR t.lookup_due_at <= @now))
          WHERE lookup_asked = 0 AND lookup_tries < @maxTries AND coalesce(lookup_last, finished_at) + @intervalMs <= @now
          ORDER BY coalesce(lookup_last, finished_at) LIMIT @limit`,
      ).all({ providers: JSON.stringify(providers), maxTries, intervalMs, now, limit }) as (TaskRow & { lookup_tries: number })[];
      const take = this.stmt(`UPDATE tasks SET lookup_due_at = @due WHERE id = @id`);
      for (const r of rows) take.run({ id: r.id, due: now + intervalMs });
      return rows.map((r) => ({ task: rowToTask(r), tries: r.lookup_tries }));
    });
  }

  /** The providers of the tasks whose outcome is unknown. */
  async unknownProviders(): Promise<string[]> {
    return this.stmt(`SELECT DISTINCT provider FROM tasks t WHERE ${LOOKED_FOR} AND t.remote_request_id IS NULL`).pluck().all() as string[];
  }

  /**
   * A lookup made for an unknown outcome, in its history: `detail.lookup` is its number, `detail.verdict` what came
   * of it. Kept only while the row is still that attempt's unknown outcome, so a lookup that outlived a resubmit
   * neither counts as one of the next parking's lookups nor asks the person about it.
   */
  async lookupNoted(id: number, attempt: string | null, reason: string, detail: { lookup: number; verdict: 'again' | 'ask' } & Record<string, unknown>, now: number): Promise<void> {
    this.tx(() => {
      const row = this.stmt(`SELECT status FROM tasks t WHERE id = ? AND ${LOOKED_FOR} AND idempotency_key IS ?`).get(id, attempt) as { status: Status } | undefined;
      if (row) this.event(id, now, row.status, row.status, { actor: 'engine', reason, detail });
    });
  }

  /**
   * Other tasks that sent this input (same provider, model and input) in a window overlapping [from, to]:
   * from their send's start to the provider's naming of the request, or to their end, or to now.
   */
  async sameInputOverlapping(task: Pick<Task, 'id' | 'inputHash'>, from: number, to: number): Promise<number[]> {
    return this.stmt(
      `SELECT id FROM tasks WHERE input_hash = @hash AND id <> @id AND submit_started_at IS NOT NULL AND NOT ${ONE_KNOWN_REQUEST}
          AND submit_started_at <= @to AND coalesce(submitted_at, finished_at, @to) >= @from ORDER BY id`,
    )
      .pluck()
      .all({ hash: task.inputHash, id: task.id, from, to }) as number[];
  }

  async unendedBefore(provider: string, sentAt: number, exceptTask: number): Promise<Task[]> {
    const rows = this.stmt(
      `SELECT * FROM tasks WHERE provider = @provider AND id <> @id AND submit_started_at < @sentAt
          AND (status IN ('RUNNING', 'SUBMITTED', 'OUTCOME_UNKNOWN') OR (status IN ('SUCCEEDED', 'FAILED', 'CANCELLED') AND finished_at > @sentAt))
        ORDER BY submit_started_at, id`,
    ).all({ provider, id: exceptTask, sentAt }) as TaskRow[];
    return rows.map(rowToTask);
  }

  /**
   * The engine adopts the request a lookup found to be exactly the one sent (see lookupVerdict), as a person's
   * adoption does and under the same conditions, recording why and the evidence, and telling the person on the row.
   * Only for the attempt the lookup was made for (`attempt`, its idempotency key): a person may have resubmitted
   * while the lookup was under way, and what it found for the earlier send is no proof about the next one.
   */
  async adoptFound(id: number, attempt: string | null, requestId: string, why: string, evidence: Record<string, unknown>, now: number, aliases: readonly string[] = []) {
    return this.change(
      id,
      `status = 'OUTCOME_UNKNOWN' AND idempotency_key IS @attempt AND NOT ${HELD_ANY}`,
      `status = 'SUBMITTED', remote_request_id = @requestId, remote_alias = @alias, remote_handle = NULL, submitted_at = @now, next_attempt_at = @now,
       charged = 'yes', unknown_reason = NULL, finished_at = NULL, lease_owner = NULL, lease_expires_at = NULL,
       note = @note`,
      { now, attempt, ...requestNames(requestId, aliases), note: `adopted by the studio after a lookup: request ${requestId}, ${why}` },
      { from: 'OUTCOME_UNKNOWN', actor: 'engine', reason: `adopted by the studio after a lookup: ${why}`, detail: { ...evidence, adopted: requestId } },
    );
  }

  async foundAfterCancel(id: number, attempt: string | null, requestId: string, why: string, evidence: Record<string, unknown>, now: number, aliases: readonly string[] = []) {
    return this.change(
      id,
      `status = 'CANCELLED' AND idempotency_key IS @attempt AND remote_request_id IS NULL AND NOT ${HELD_ANY}`,
      `remote_request_id = @requestId, remote_alias = @alias`,
      { now, attempt, ...requestNames(requestId, aliases) },
      { from: 'CANCELLED', actor: 'engine', reason: `found the request sent before the cancel after a lookup: ${why}`, detail: { ...evidence, requestId } },
    );
  }

  // ---- A person's decisions ---------------------------------------------------------------

  /**
   * No row changed means the task moved on, or the request already belongs to another task of the same
   * provider (see requestHolder): the check is part of this write, so two adoptions racing cannot both
   * take one request, which would count one result twice and drop the other task's request from the spend.
   */
  async adopt(id: number, requestId: string, now: number, aliases: readonly string[] = []) {
    return this.tx(() => {
      refuseIfTaskMoved(this.db, id);
      return this.change(
        id,
        `status = 'OUTCOME_UNKNOWN' AND NOT ${HELD_ANY}`,
        `status = 'SUBMITTED', remote_request_id = @requestId, remote_alias = @alias, remote_handle = NULL, submitted_at = @now, next_attempt_at = @now,
         charged = 'yes', unknown_reason = NULL, finished_at = NULL, lease_owner = NULL, lease_expires_at = NULL`,
        { now, ...requestNames(requestId, aliases) },
        { from: 'OUTCOME_UNKNOWN', actor: 'person', reason: 'adopted a request id found at the provider', detail: { requestId } },
      );
    });
  }

  async resubmit(id: number, now: number, detail?: Record<string, unknown>) {
    return this.tx(() => {
      refuseIfTaskMoved(this.db, id);
      return this.change(
        id,
        `status = 'OUTCOME_UNKNOWN'`,
        `status = 'PENDING', cost_abandoned = cost_abandoned + coalesce(cost_estimated, 0), charged = 'no',
         submit_started_at = NULL, idempotency_key = NULL, remote_request_id = NULL, remote_alias = NULL, remote_handle = NULL, submitted_at = NULL,
         unknown_reason = NULL, finished_at = NULL, next_attempt_at = @now, progress = NULL`,
        { now },
        { from: 'OUTCOME_UNKNOWN', actor: 'person', reason: RESUBMITTED, ...(detail ? { detail } : {}) },
      );
    });
  }

  async giveUp(id: number, now: number) {
    return this.tx(() => {
      refuseIfTaskMoved(this.db, id);
      const task = this.change(
        id,
        `status = 'OUTCOME_UNKNOWN'`,
        `status = 'FAILED', error = 'given up after an unknown outcome', finished_at = @now`,
        { now },
        { from: 'OUTCOME_UNKNOWN', actor: 'person', reason: 'gave up; still counted as possibly charged' },
      );
      if (task) this.cancelDependents(id, now);
      return task;
    });
  }

  /** Cancels a task that has not finished. The caller asks the provider to cancel a submitted one. */
  async cancel(id: number, now: number, unbilled = false) {
    const task = this.change(
      id,
      `status IN ('PENDING', 'RUNNING', 'SUBMITTED')`,
      `status = 'CANCELLED', finished_at = @now, lease_owner = NULL, lease_expires_at = NULL, note = NULL,
       charged = CASE WHEN @unbilled THEN 'no' WHEN charged = 'yes' THEN 'maybe' ELSE charged END`,
      { now, unbilled: unbilled ? 1 : 0 },
      { actor: 'person', reason: 'cancelled' },
    );
    if (task) this.cancelDependents(id, now, cancelledWith);
    return task;
  }

  async notSentAfterCancel(id: number, attempt: string, now: number) {
    return this.change(
      id,
      `status = 'CANCELLED' AND idempotency_key = @attempt AND remote_request_id IS NULL AND charged = 'maybe'`,
      `charged = 'no'`,
      { now, attempt },
      { from: 'CANCELLED', actor: 'engine', reason: NOT_SENT_AFTER_CANCEL },
    );
  }

  async cancelDependentsOf(id: number, now: number): Promise<void> {
    this.tx(() => this.cancelDependents(id, now, cancelledWith));
  }

  async followAfterCancel(id: number, requestId: string, reason: string, now: number, notBefore = now, kept?: string) {
    return this.change(
      id,
      `status = 'CANCELLED' AND remote_request_id = @requestId AND submit_started_at IS NOT NULL`,
      `status = 'SUBMITTED', charged = 'maybe', submitted_at = coalesce(submitted_at, @now), finished_at = NULL, next_attempt_at = @notBefore,
       lease_owner = NULL, lease_expires_at = NULL, note = @reason`,
      { now, requestId, reason, notBefore },
      { from: 'CANCELLED', actor: 'engine', reason, detail: afterCancelDetail(requestId, kept) },
    );
  }

  async settleFollow(id: number, requestId: string, stopped: boolean, charged: Charged | null, reason: string, now: number, kept?: string) {
    return this.change(
      id,
      `status = 'SUBMITTED' AND remote_request_id = @requestId AND lease_owner IS NULL`,
      `status = CASE WHEN @stopped THEN 'CANCELLED' ELSE status END, charged = coalesce(@charged, charged),
       finished_at = CASE WHEN @stopped THEN @now ELSE finished_at END, next_attempt_at = @now,
       note = CASE WHEN @stopped THEN NULL ELSE @reason END`,
      { now, requestId, reason, stopped: stopped ? 1 : 0, charged },
      { from: 'SUBMITTED', actor: 'engine', reason, detail: afterCancelDetail(requestId, kept) },
    );
  }

  async unfollowedAfterCancel(): Promise<Task[]> {
    return (this.stmt(`SELECT * FROM tasks WHERE ${UNFOLLOWED_AFTER_CANCEL} ORDER BY id`).all() as TaskRow[]).map(rowToTask);
  }

  /** Pending work that can never run because something it needs failed or was cancelled; `why` words the error. */
  private cancelDependents(id: number, now: number, why: (id: number) => DependentWords = didNotSucceed): void {
    const dependents = this.stmt(
      `SELECT t.id FROM task_dependencies d JOIN tasks t ON t.id = d.task_id
        WHERE d.depends_on = ? AND t.status = 'PENDING'`,
    ).all(id) as { id: number }[];
    for (const { id: dep } of dependents) {
      const { error, reason } = why(id);
      const cancelled = this.change(
        dep,
        `status = 'PENDING'`,
        `status = 'CANCELLED', error = @error, finished_at = @now`,
        { now, error },
        { from: 'PENDING', actor: 'engine', reason, detail: { dependsOn: id } },
      );
      if (cancelled) this.cancelDependents(dep, now, why);
    }
  }

  /** The pending work a cancel of this task would cancel too (see cancelDependents), nearest first. */
  async pendingDependents(id: number): Promise<Task[]> {
    const rows = this.stmt(
      `WITH RECURSIVE deps(id, depth) AS (
         SELECT d.task_id, 1 FROM task_dependencies d JOIN tasks t ON t.id = d.task_id WHERE d.depends_on = ? AND t.status = 'PENDING'
         UNION
         SELECT d.task_id, deps.depth + 1 FROM deps JOIN task_dependencies d ON d.depends_on = deps.id JOIN tasks t ON t.id = d.task_id
          WHERE t.status = 'PENDING')
       SELECT t.* FROM tasks t JOIN (SELECT id, min(depth) AS depth FROM deps GROUP BY id) x ON x.id = t.id ORDER BY x.depth, t.id`,
    ).all(id) as TaskRow[];
    return rows.map(rowToTask);
  }

  /** The tasks this one was made from, and those made from it. */
  async related(id: number): Promise<{ dependsOn: Task[]; dependents: Task[] }> {
    const dependsOn = this.stmt(`SELECT t.* FROM task_dependencies d JOIN tasks t ON t.id = d.depends_on WHERE d.task_id = ? ORDER BY t.id`).all(id) as TaskRow[];
    const dependents = this.stmt(`SELECT t.* FROM task_dependencies d JOIN tasks t ON t.id = d.task_id WHERE d.depends_on = ? ORDER BY t.id`).all(id) as TaskRow[];
    return { dependsOn: dependsOn.map(rowToTask), dependents: dependents.map(rowToTask) };
  }

  // ---- The library: every result the studio saved, across projects ---------------------------

  /**
   * One page of saved results (finished tasks with at least one file), newest first, with the project's name.
   * A result whose files the person deleted stays listed (it was paid for); its output_path is cleared.
   */
  async library(filter: LibraryFilter, offset: number, limit: number): Promise<{ total: number; items: { task: Task; project: string; files: number }[] }> {
    const where = `t.status = 'SUCCEEDED' AND EXISTS (SELECT 1 FROM task_outputs o WHERE o.task_id = t.id)
       AND (@projectId IS NULL OR t.project_id = @projectId) AND (@kind IS NULL OR t.kind = @kind)
       AND (@provider IS NULL OR t.provider = @provider)
       AND (@from IS NULL OR t.finished_at >= @from) AND (@to IS NULL OR t.finished_at < @to)
       AND (@raw IS NULL OR instr(lower(t.input_json), lower(@raw)) > 0)
       AND (@search IS NULL OR instr(lower(coalesce(json_extract(t.input_json, '$.prompt'), '') || ' ' || coalesce(json_extract(t.input_json, '$.text'), '')), lower(@search)) > 0)`;
    const params = {
      projectId: filter.projectId ?? null,
      kind: filter.kind ?? null,
      provider: filter.provider ?? null,
      from: filter.from ?? null,
      to: filter.to ?? null,
      search: filter.search ? filter.search : null,
      // Words with no character JSON escapes appear as they are in the stored input: a plain match on its text
      // first spares parsing the JSON of every row that cannot match (most of them, at 100,000 results).
      raw: filter.search && !/["\\\u0000-\u001f]/.test(filter.search) ? filter.search : null,
    };
    return this.tx(() => {
      const total = this.stmt(`SELECT count(*) FROM tasks t WHERE ${where}`).pluck().get(params) as number;
      const rows = this.stmt(
        `SELECT t.*, p.name AS project_name, (SELECT count(*) FROM task_outputs o WHERE o.task_id = t.id) AS file_count
           FROM tasks t JOIN projects p ON p.id = t.project_id WHERE ${where}
          ORDER BY t.finished_at DESC, t.id DESC LIMIT @limit OFFSET @offset`,
      ).all({ ...params, limit, offset }) as (TaskRow & { project_name: string; file_count: number })[];
      return { total, items: rows.map((r) => ({ task: rowToTask(r), project: r.project_name, files: r.file_count })) };
    });
  }

  /** The providers that have saved results, for the library's filter. */
  async libraryProviders(): Promise<string[]> {
    // One step per provider along the index by provider (tasks_durations), not a pass over every result.
    return this.stmt(
      `WITH RECURSIVE p(provider) AS (
         SELECT min(provider) FROM tasks WHERE status = 'SUCCEEDED'
         UNION ALL
         SELECT (SELECT min(provider) FROM tasks WHERE status = 'SUCCEEDED' AND provider > p.provider) FROM p WHERE p.provider IS NOT NULL)
       SELECT provider FROM p WHERE provider IS NOT NULL`,
    )
      .pluck()
      .all() as string[];
  }

  /**
   * The scene each task was made for, read from the renders that used it: a render names each scene's clip and
   * narration, and a clip names the image it was made from. The newest render wins; null when none used it.
   */
  async scenesOf(ids: readonly number[]): Promise<Map<number, string | null>> {
    if (ids.length === 0) return new Map();
    // Found through the dependency rows a Generate writes (a render depends on each clip and narration, a clip on
    // its image), so only the renders that used these tasks are read, however many renders the studio made.
    // CROSS JOIN keeps that order: left to itself the planner reads every render first.
    const rows = this.stmt(
      `WITH wanted(id) AS (SELECT value FROM json_each(@ids)),
            part(wanted, id) AS (
              SELECT id, id FROM wanted
              UNION ALL
              SELECT w.id, c.id FROM wanted w CROSS JOIN task_dependencies d CROSS JOIN tasks c
               WHERE d.depends_on = w.id AND c.id = d.task_id AND c.kind = 'clip'),
            uses(wanted, render, scene) AS MATERIALIZED (
              SELECT p.wanted, r.id, json_extract(s.value, '$.id')
                FROM part p CROSS JOIN task_dependencies d CROSS JOIN tasks r CROSS JOIN json_each(r.input_json, '$.scenes') s
               WHERE d.depends_on = p.id AND r.id = d.task_id AND r.kind = 'render'
                 AND (json_extract(s.value, '$.clip."$output"') = p.id OR json_extract(s.value, '$.narration."$output"') = p.id))
       SELECT w.id AS id, (SELECT u.scene FROM uses u WHERE u.wanted = w.id ORDER BY u.render DESC LIMIT 1) AS scene
         FROM wanted w`,
    ).all({ ids: JSON.stringify(ids) }) as { id: number; scene: string | null }[];
    return new Map(rows.map((r) => [r.id, r.scene]));
  }

  /**
   * The person deleted a result's files: the row keeps every figure of what it cost and its task_outputs, and no
   * longer names a file, so a Generate judges the step a paid result that is lost. Logged with the files removed.
   */
  async forgetOutputs(id: number, reason: string, files: string[], now: number) {
    return this.tx(() => {
      // The team database may name these very files.
      refuseIfTaskMoved(this.db, id);
      return this.change(
        id,
        `status = 'SUCCEEDED' AND output_path IS NOT NULL`,
        `output_path = NULL, output_sha256 = NULL`,
        { now },
        { from: 'SUCCEEDED', actor: 'person', reason, detail: { deletedFiles: files } },
      );
    });
  }

  /**
   * Rows written when paths were kept absolute: each path `relative` turns into one relative to the data folder is
   * rewritten, all in one transaction, so a data folder that moved finds its files. Run again, it changes nothing.
   * Returns how many paths changed.
   */
  relativizePaths(relative: (path: string) => string | null): number {
    const absolute = (column: string) => `(substr(${column}, 1, 1) IN ('/', '\\') OR substr(${column}, 2, 1) = ':')`;
    const read = () => [
      ...(this.stmt(`SELECT output_path AS path, id FROM tasks WHERE ${absolute('output_path')}`).all() as { path: string; id: number }[]).map((r) => ({
        path: r.path,
        update: () => this.stmt(`UPDATE tasks SET output_path = ? WHERE id = ?`).run(relative(r.path), r.id),
      })),
      ...(this.stmt(`SELECT path, task_id, idx FROM task_outputs WHERE ${absolute('path')}`).all() as { path: string; task_id: number; idx: number }[]).map((r) => ({
        path: r.path,
        update: () => this.stmt(`UPDATE task_outputs SET path = ? WHERE task_id = ? AND idx = ?`).run(relative(r.path), r.task_id, r.idx),
      })),
    ];
    // Read first: a studio opened while another holds the write lock waits only when there is something to change.
    if (!read().some((r) => relative(r.path) !== null)) return 0;
    return this.tx(() => {
      const due = read().filter((r) => relative(r.path) !== null);
      for (const r of due) r.update();
      return due.length;
    });
  }

  // ---- Spend across projects ---------------------------------------------------------------

  /** spendByModel over every project, per currency (projects may keep different ones). */
  async spendByModelAll(): Promise<(ModelSpend & { currency: string })[]> {
    return this.stmt(
      `SELECT provider, model, currency, ${MODEL_SPEND}
         FROM tasks WHERE kind <> 'render' AND (charged <> 'no' OR cost_abandoned > 0)
        GROUP BY provider, model, currency ORDER BY provider, model, currency`,
    ).all() as (ModelSpend & { currency: string })[];
  }

  /** spendByDay over every project, with each row's project, for the CSV of all projects. */
  async spendByDayAll(): Promise<(DaySpend & { project: string; currency: string })[]> {
    return this.stmt(
      `SELECT p.name AS project, p.currency AS currency,
              date(coalesce(t.submitted_at, t.submit_started_at, t.created_at) / 1000, 'unixepoch') AS day, t.provider AS provider,
              coalesce(sum(CASE WHEN t.charged = 'yes' THEN t.cost_actual END), 0) AS actual,
              coalesce(sum(CASE WHEN t.charged = 'yes' AND t.cost_actual IS NULL THEN t.cost_estimated END), 0) AS estimated,
              coalesce(sum(CASE WHEN t.charged = 'maybe' THEN t.cost_estimated END), 0) + sum(t.cost_abandoned) AS possiblyCharged
         FROM tasks t JOIN projects p ON p.id = t.project_id WHERE t.charged <> 'no' OR t.cost_abandoned > 0
        GROUP BY p.id, day, t.provider ORDER BY p.name, day, t.provider`,
    ).all() as never;
  }
}
