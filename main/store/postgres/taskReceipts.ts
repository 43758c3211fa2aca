import type { Receipt } from '../../domain/ports.ts';
import type { Status, Task } from '../../domain/tasks/model.ts';
import { rowToTask } from '../../domain/tasks/rows.ts';
import { BEHIND_JOURNAL, behindJournalReason, collectedWords, receiptOrigin, receiptParams, receiptSettledBy, RIVAL_RECEIPTS, siblingWords, type ReceiptRow } from '../receiptParams.ts';
import type { Sql } from './sql.ts';
import { CLOCK, DB_NOW, RESUBMITTED, type TaskTable } from './taskTable.ts';

// Request ids replayed from the receipt journal: the attempt's own, one ahead of a restored row, or an earlier attempt's.

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

/**
 * Taken before a write that checks HELD_ELSEWHERE, in its transaction: two machines adopting one request for
 * two tasks then check one after the other, and the second sees the first's, as the embedded store's single
 * writer makes them do (the unique index on request ids would otherwise refuse the second with an error).
 */
const LOCK_REQUEST = `SELECT pg_advisory_xact_lock(hashtext('studio.task.request'), hashtext(lower(@requestId::text)))`;

/**
 * Records a journaled request id the row lacks (its write failed, or its process died first), for the
 * attempt it belongs to only. A row that can be polled by its id goes to SUBMITTED, from RUNNING or from an
 * unknown outcome the engine parked; any other row (cancelled, decided by a person) just keeps the id.
 * A receipt of an earlier attempt of the task (the row moved on while its id was on the way) is never dropped:
 * see lateReceipt.
 */
export async function applyReceipt(table: TaskTable, receipt: Receipt, pollable: boolean, now: number) {
  const params = { ...receiptParams(receipt, now), pollable };
  const task = await table.sql.tx(async (tx) => {
    const [identity] = await table.run<{ id: string }>(tx, `SELECT id FROM database_identity`, {});
    const origin = receiptOrigin(receipt, [identity!.id]);
    if (origin === 'other') return undefined;
    await table.run(tx, LOCK_REQUEST, params);
    // An unnamed receipt (see receiptOrigin) also needs the row's send to have started before it was heard.
    const own = await table.changeIn(
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
    return (await aheadReceipt(table, tx, receipt, params)) ?? lateReceipt(table, tx, receipt, params);
  });
  return table.wake(task);
}

/**
 * A receipt of an attempt the row has not reached: a backup of the database restored after that attempt's request
 * was sent. The row takes the request (see BEHIND_JOURNAL) and is never sent again for it.
 */
function aheadReceipt(table: TaskTable, tx: Sql, receipt: Receipt, params: Record<string, unknown>) {
  return table.changeIn(
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

export async function noteRivalReceipts(table: TaskTable, receipts: readonly Receipt[], now: number): Promise<void> {
  await table.sql.tx(async (tx) => {
    for (const receipt of receipts) {
      // When its id was heard, so a person can tell the rivals apart (the event's own time is the replay's).
      const detail = { requestId: receipt.requestId, attempt: receipt.idempotencyKey, heard: receipt.at, rivals: receipts.filter((r) => r !== receipt).map((r) => r.requestId) };
      await table.run(
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
async function lateReceipt(table: TaskTable, tx: Sql, receipt: Receipt, params: Record<string, unknown>): Promise<Task | undefined> {
  // Another attempt of the task (one it marked, or one its key numbers that a row restored from an older backup never
  // marked), or the same one sent twice (two workers, the database restored between): each a paid request of this task.
  const earlier = `${SAME_TASK} AND (idempotency_key IS DISTINCT FROM @key::text OR remote_request_id IS NOT NULL) AND (${MARKED_BEFORE} OR @attempt::int > 0)`;
  const detail = { requestId: receipt.requestId, attempt: receipt.idempotencyKey };
  const taken =
    params.pollable === true
      ? await table.changeIn(
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
  const collected = taken ?? (params.pollable === true ? await collectLate(table, tx, receipt, params, earlier) : undefined);
  if (collected) return collected;
  await table.run(
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
async function collectLate(table: TaskTable, tx: Sql, receipt: Receipt, params: Record<string, unknown>, earlier: string): Promise<Task | undefined> {
  const id = receipt.taskId;
  const [original] = await table.run<{ status: Status; attempt: number; same: boolean }>(
    tx,
    `SELECT status, ${ATTEMPT_NUMBER}::int AS attempt, idempotency_key IS NOT DISTINCT FROM @key::text AS same FROM tasks
      WHERE id = @id::bigint AND ${earlier} AND remote_request_id IS DISTINCT FROM @requestId::text AND NOT ${HELD_ELSEWHERE}
      FOR NO KEY UPDATE`,
    { ...params, id },
  );
  if (!original) return undefined;
  const [row] = await table.run(
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
  await table.run(
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
export async function receiptSettled(table: TaskTable, receipt: Receipt): Promise<boolean> {
  const [identity] = await table.run<{ id: string }>(table.sql, `SELECT id FROM database_identity`, {});
  const [row] = await table.run<ReceiptRow>(
    table.sql,
    `SELECT ${SAME_TASK} AS same, idempotency_key IS NOT DISTINCT FROM @key::text AS own, remote_request_id IS NOT NULL AS named,
            remote_request_id IS NOT DISTINCT FROM @requestId::text AS holds,
            ${HELD_BY_A_TASK} OR ${LATE_NOTED} OR (@attempt::int = 0 AND NOT ${MARKED_BEFORE}) AS noted
       FROM tasks WHERE id = @id::bigint`,
    { ...receiptParams(receipt, 0), id: receipt.taskId },
  );
  return receiptSettledBy(receiptOrigin(receipt, [identity!.id]), row);
}
