import pg from 'pg';
import type { SavedOutput } from '../../domain/ports.ts';
import type { Charged, Status, TaskOutput } from '../../domain/tasks/model.ts';
import { REQUEST_HELD_NOTE } from '../../domain/tasks/requestHeld.ts';
import { CANCELLED_AFTER_PAID } from '../../domain/tasks/cancelledAfterPaid.ts';
import { rowToOutput, type OutputRow } from '../../domain/tasks/rows.ts';
import type { CompletedResult, FailCost, Lease } from '../port.ts';
import { notLinkedYet } from '../lateOutputs.ts';
import type { Sql } from './sql.ts';
import { cancelDependents } from './taskQueue.ts';
import { FENCE, fence, jsonOrNull, LEASED, type TaskTable } from './taskTable.ts';

// How an attempt ends: a result saved with its files (or files linked late), a failure, files the person deleted.

/** The person cancelled this task after its request was paid for: still cancelled, or followed since (see followAfterCancel). */
const AFTER_CANCEL = `(status = 'CANCELLED' OR EXISTS (SELECT 1 FROM task_events e WHERE e.task_id = tasks.id AND e.detail_json::json ->> 'afterCancel' = 'true'
                                                       AND e.detail_json::json ->> 'requestId' = tasks.remote_request_id))`;

/** The words a task cancelled after its request was paid for ends with: the latest said for its request (see afterCancelDetail), else @keptNote. */
const KEPT_AFTER_CANCEL = `coalesce((SELECT e.detail_json::json ->> 'kept' FROM task_events e WHERE e.task_id = tasks.id AND e.detail_json::json ->> 'afterCancel' = 'true'
                                        AND e.detail_json::json ->> 'kept' IS NOT NULL AND e.detail_json::json ->> 'requestId' = tasks.remote_request_id
                                      ORDER BY e.id DESC LIMIT 1), @keptNote::text)`;

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

/** Every file of the result is linked to the task; the first is its main output. */
export async function complete(table: TaskTable, id: number, out: CompletedResult, lease: Lease) {
  // One statement from either status, read in it: a polled request completes from SUBMITTED, a synchronous
  // result and a render from RUNNING.
  return completeWhere(table, table.sql, id, `${FENCE} AND ${LEASED}`, { ...lease }, out, undefined, 'read');
}

/**
 * Completes a row that moved on without the worker that holds its attempt's result (parked, taken by
 * another worker, cancelled or given up too late meanwhile): conditioned on the attempt, not the lease,
 * since the saved result proves the outcome and was paid for.
 * A row failed as paid with its result out of reach (a synchronous result another
 * machine could not fetch, a result expired at the provider) is completed too: that result has turned up.
 */
export async function completeAttempt(table: TaskTable, id: number, idempotencyKey: string | null, out: CompletedResult, now: number) {
  return completeWhere(
    table,
    table.sql,
    id,
    `idempotency_key = @key::text AND (status IN ('RUNNING', 'SUBMITTED', 'OUTCOME_UNKNOWN', 'CANCELLED') OR (status = 'FAILED' AND charged IN ('maybe', 'yes')))`,
    { now, key: idempotencyKey },
    out,
    'the paid result of this attempt arrived after the task had moved on; it is kept',
  );
}

export async function linkLateOutputs(table: TaskTable, id: number, idempotencyKey: string | null, outputs: readonly SavedOutput[], reason: string, now: number): Promise<number | null> {
  return table.sql.tx(async (tx) => {
    // Locked first, so a second linker of the same row reads the files this one links.
    const held = await table.run(tx, `SELECT id FROM tasks WHERE id = @id::bigint AND status = 'SUCCEEDED' AND idempotency_key = @key::text AND output_path IS NOT NULL FOR NO KEY UPDATE`, {
      id,
      key: idempotencyKey,
    });
    if (held.length === 0) return null;
    const linked = await table.run<{ path: string; sha256: string }>(tx, `SELECT path, sha256 FROM task_outputs WHERE task_id = @id::bigint`, { id });
    const late = notLinkedYet(linked, outputs);
    if (late.length === 0) return 0;
    await table.run(
      tx,
      `WITH saved AS (
         INSERT INTO task_outputs (task_id, idx, path, sha256, machine, machine_id, bytes, content_type)
         SELECT @id::bigint, (SELECT coalesce(max(idx), -1) FROM task_outputs WHERE task_id = @id::bigint) + o.n, o.path, o.sha256, @machine::text, @machineId::text, o.bytes, o.content_type
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
        machine: table.machine,
        machineId: table.machineId,
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
async function completeWhere(table: TaskTable, q: Sql, id: number, where: string, params: Record<string, unknown>, out: CompletedResult, why?: string, from?: Status | 'read') {
  try {
    return await completeOnce(table, q, id, where, params, out, why, from);
  } catch (err) {
    if (!requestTaken(err)) throw err;
    return completeOnce(table, q, id, where, params, out, why, from);
  }
}

async function completeOnce(table: TaskTable, q: Sql, id: number, where: string, params: Record<string, unknown>, out: CompletedResult, why?: string, from?: Status | 'read') {
  const first = out.outputs[0]!;
  const task = await table.changeIn(
    q,
    id,
    where,
    `status = 'SUCCEEDED', output_path = @outputPath::text, output_sha256 = @sha256::text, progress = 1, error = NULL,
     note = CASE WHEN ${AFTER_CANCEL} THEN ${KEPT_AFTER_CANCEL} ELSE NULL END,
     unknown_reason = NULL, charged = CASE WHEN submit_started_at IS NULL THEN charged ELSE 'yes' END,
     remote_request_id = coalesce(remote_request_id, CASE WHEN EXISTS (SELECT 1 FROM taken) THEN NULL ELSE @requestId::text END),
     cost_actual_source = CASE WHEN @costActual::bigint IS NULL THEN cost_actual_source ELSE @costSource::text END,
     cost_actual = coalesce(@costActual::bigint, cost_actual),
     billed_units = CASE WHEN @costActual::bigint IS NULL THEN billed_units ELSE @units::double precision END,
     billed_unit = CASE WHEN @costActual::bigint IS NULL THEN billed_unit ELSE @unit::text END,
     lease_owner = NULL, lease_expires_at = NULL, finished_at = @now::bigint`,
    {
      ...params,
      units: out.costUnits?.count ?? null,
      unit: out.costReported ?? out.costUnits?.unit ?? null,
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
      machine: table.machine,
      machineId: table.machineId,
    },
    {
      from,
      actor: 'engine',
      reason: why ?? (out.outputs.length > 1 ? `${out.outputs.length} outputs saved` : 'output saved'),
      // The words a task cancelled after it was paid for ends with are its note, decided in the same write.
      reasonFrom: 'coalesce(note, @eventReason::text)',
      before: TAKEN_REQUEST,
      detailFrom: TAKEN_DETAIL,
      also: `, saved AS (
               INSERT INTO task_outputs (task_id, idx, path, sha256, machine, machine_id, bytes, content_type)
               SELECT changed.id, o.n - 1, o.path, o.sha256, @machine::text, @machineId::text, o.bytes, o.content_type
                 FROM changed, unnest(@paths::text[], @sums::text[], @sizes::bigint[], @types::text[]) WITH ORDINALITY AS o(path, sha256, bytes, content_type, n)
               ON CONFLICT (task_id, idx) DO UPDATE SET path = excluded.path, sha256 = excluded.sha256, machine = excluded.machine, machine_id = excluded.machine_id,
                                                        bytes = excluded.bytes, content_type = excluded.content_type)`,
    },
  );
  return table.wake(task);
}

export async function outputs(table: TaskTable, taskId: number): Promise<TaskOutput[]> {
  return (await table.run<OutputRow>(table.sql, `SELECT * FROM task_outputs WHERE task_id = @taskId::bigint ORDER BY idx`, { taskId })).map(rowToOutput);
}

export async function fail(table: TaskTable, id: number, error: string, charged: Charged, lease: Lease, cost: FailCost | null = null) {
  const task = await table.sql.tx(async (tx) => {
    const failed = await table.changeIn(
      tx,
      id,
      `${fence(lease)} AND ${LEASED}`,
      `status = 'FAILED', error = @error::text, charged = @charged::text, note = NULL,
       cost_actual_source = CASE WHEN @costActual::bigint IS NULL THEN cost_actual_source ELSE @costSource::text END,
       cost_actual = coalesce(@costActual::bigint, cost_actual),
       billed_units = CASE WHEN @costActual::bigint IS NULL THEN billed_units ELSE @units::double precision END,
       billed_unit = CASE WHEN @costActual::bigint IS NULL THEN billed_unit ELSE @unit::text END,
       lease_owner = NULL, lease_expires_at = NULL, finished_at = @now::bigint`,
      { ...lease, error, charged, costActual: cost?.amount ?? null, costSource: cost?.source ?? null, units: cost?.units?.count ?? null, unit: cost?.reported ?? null },
      { actor: 'engine', reason: error },
    );
    if (failed) await cancelDependents(table, tx, id, lease.now);
    return failed;
  });
  return table.wake(task);
}

/**
 * The person deleted a result's files: the row keeps every figure of what it cost and its task_outputs, and no
 * longer names a file, so a Generate judges the step a paid result that is lost. Logged with the files removed.
 */
export async function forgetOutputs(table: TaskTable, id: number, reason: string, files: string[], now: number) {
  return table.change(
    id,
    `status = 'SUCCEEDED' AND output_path IS NOT NULL`,
    `output_path = NULL, output_sha256 = NULL`,
    { now },
    { from: 'SUCCEEDED', actor: 'person', reason, detail: { deletedFiles: files } },
  );
}
