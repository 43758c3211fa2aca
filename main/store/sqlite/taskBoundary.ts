import type { RemoteRef, Status, Task } from '../../domain/tasks/model.ts';
import { rowToTask, type TaskRow } from '../../domain/tasks/rows.ts';
import type { BoundaryMark, InputUpload, Lease } from '../port.ts';
import { TaskTable, FENCE, fence } from './taskTable.ts';
import { SAME_MONEY } from './taskSpend.ts';

/**
 * What a project has spent or may have spent: billed, else estimated, for accepted and unknown requests; of the same
 * money as this task's, real or the simulator's made-up money, each held against the budget apart (see SAME_MONEY).
 */
const PROJECT_SPEND = `(SELECT coalesce(sum(CASE WHEN s.charged <> 'no' THEN coalesce(s.cost_actual, s.cost_estimated, 0) ELSE 0 END)
                                   + sum(s.cost_abandoned), 0)
                         FROM tasks s WHERE s.project_id = tasks.project_id AND s.currency = tasks.currency AND ${SAME_MONEY})`;

/**
 * This task's estimate still fits in its project's budget (or the project has none). A task of unknown price (the
 * person confirmed it) is never counted as 0: it goes only while something of the budget is left. A task priced in
 * another currency than its project's budget is not sent: no rate is known to hold it against the budget with.
 */
const WITHIN_BUDGET = `(SELECT CASE WHEN p.budget IS NULL THEN 1
                                    WHEN tasks.currency <> p.currency THEN 0
                                    WHEN tasks.cost_estimated IS NULL THEN ${PROJECT_SPEND} < p.budget
                                    ELSE ${PROJECT_SPEND} + tasks.cost_estimated <= p.budget END
                          FROM projects p WHERE p.id = tasks.project_id)`;

/** The boundary write before a paid request leaves, and the request ids (and other names) a provider gives it. */
export class TaskBoundary extends TaskTable {
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

  /** The catalogue's estimate, set before the boundary so spend is known even if the provider never answers. */
  async setEstimate(id: number, cost: number, source: string, currency: string, lease: Lease): Promise<boolean> {
    const r = this.stmt(
      `UPDATE tasks SET cost_estimated = @cost, cost_estimate_source = @source, currency = @currency, updated_at = @now
        WHERE id = @id AND ${FENCE}`,
    ).run({ id, cost, source, currency, ...lease });
    return r.changes === 1;
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
}
