import type { Receipt } from '../../domain/ports.ts';
import type { Status, Task } from '../../domain/tasks/model.ts';
import { rowToTask, type TaskRow } from '../../domain/tasks/rows.ts';
import { BEHIND_JOURNAL, behindJournalReason, collectedWords, receiptOrigin, receiptParams, receiptSettledBy, RIVAL_RECEIPTS, siblingWords, type ReceiptRow } from '../receiptParams.ts';
import { databaseIdsOf } from './databaseId.ts';
import { TaskTable, RESUBMITTED } from './taskTable.ts';

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

/** Request ids kept in the receipt journal, replayed onto the rows that lack them (see applyReceipt). */
export class TaskReceipts extends TaskTable {
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
}
