import type { SavedOutput } from '../../domain/ports.ts';
import type { Charged, Status, TaskOutput } from '../../domain/tasks/model.ts';
import { requestHeldDetail } from '../../domain/tasks/requestHeld.ts';
import { CANCELLED_AFTER_PAID } from '../../domain/tasks/cancelledAfterPaid.ts';
import { rowToOutput, type OutputRow } from '../../domain/tasks/rows.ts';
import { refuseIfTaskMoved } from './projectMoves.ts';
import type { CompletedResult, FailCost, Lease } from '../port.ts';
import { notLinkedYet } from '../lateOutputs.ts';
import { TaskTable, LEASED, FENCE, fence } from './taskTable.ts';

/** The person cancelled this task after its request was paid for: still cancelled, or followed since (see followAfterCancel). */
const AFTER_CANCEL = `(status = 'CANCELLED' OR EXISTS (SELECT 1 FROM task_events e WHERE e.task_id = tasks.id AND json_extract(e.detail_json, '$.afterCancel') = 1
                                                       AND json_extract(e.detail_json, '$.requestId') IS tasks.remote_request_id))`;

/** The words a task cancelled after its request was paid for ends with: the latest said for its request (see afterCancelDetail), else @keptNote. */
const KEPT_AFTER_CANCEL = `coalesce((SELECT json_extract(e.detail_json, '$.kept') FROM task_events e WHERE e.task_id = tasks.id AND json_extract(e.detail_json, '$.afterCancel') = 1
                                        AND json_extract(e.detail_json, '$.kept') IS NOT NULL AND json_extract(e.detail_json, '$.requestId') IS tasks.remote_request_id
                                      ORDER BY e.id DESC LIMIT 1), @keptNote)`;

/** How an attempt ends: completed with its files (late ones too), or failed; and the files a result keeps. */
export class TaskCompletion extends TaskTable {
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
          `INSERT INTO task_outputs (task_id, idx, path, sha256, bytes, content_type, machine, machine_id)
           SELECT @id, coalesce(max(idx), -1) + 1, @path, @sha256, @bytes, @contentType, @machine, @machineId FROM task_outputs WHERE task_id = @id`,
        ).run({ id, path: o.path, sha256: o.sha256, bytes: o.bytes, contentType: o.contentType, machine: this.machine, machineId: this.machineId });
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
         cost_actual = coalesce(@costActual, cost_actual),
         billed_units = CASE WHEN @costActual IS NULL THEN billed_units ELSE @units END,
         billed_unit = CASE WHEN @costActual IS NULL THEN billed_unit ELSE @unit END,
         lease_owner = NULL, lease_expires_at = NULL, finished_at = @now`,
        { ...params, outputPath: first.path, sha256: first.sha256, costActual: out.costActual, costSource: out.costSource ?? null, units: out.costUnits?.count ?? null, unit: out.costReported ?? out.costUnits?.unit ?? null, requestId: heldBy === undefined ? named : null, keptNote: CANCELLED_AFTER_PAID },
        {
          from,
          actor: 'engine',
          reason: this.keptAfterCancel(id) ?? why ?? (out.outputs.length > 1 ? `${out.outputs.length} outputs saved` : 'output saved'),
          detail: heldBy === undefined ? undefined : requestHeldDetail(named!, heldBy),
          then: () => {
            for (const [index, o] of out.outputs.entries()) {
              this.stmt(
                `INSERT OR REPLACE INTO task_outputs (task_id, idx, path, sha256, bytes, content_type, machine, machine_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
              ).run(id, index, o.path, o.sha256, o.bytes, o.contentType, this.machine, this.machineId);
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

  async fail(id: number, error: string, charged: Charged, lease: Lease, cost: FailCost | null = null) {
    const task = this.change(
      id,
      `${fence(lease)} AND ${LEASED}`,
      `status = 'FAILED', error = @error, charged = @charged, note = NULL,
       cost_actual_source = CASE WHEN @costActual IS NULL THEN cost_actual_source ELSE @costSource END,
       cost_actual = coalesce(@costActual, cost_actual),
       billed_units = CASE WHEN @costActual IS NULL THEN billed_units ELSE @units END,
       billed_unit = CASE WHEN @costActual IS NULL THEN billed_unit ELSE @unit END,
       lease_owner = NULL, lease_expires_at = NULL, finished_at = @now`,
      { ...lease, error, charged, costActual: cost?.amount ?? null, costSource: cost?.source ?? null, units: cost?.units?.count ?? null, unit: cost?.reported ?? null },
      { actor: 'engine', reason: error },
    );
    if (task) this.cancelDependents(id, lease.now);
    return task;
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
}
