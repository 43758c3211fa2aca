import type { RemoteRef, Task } from '../../domain/tasks/model.ts';
import { rowToTask, type TaskRow } from '../../domain/tasks/rows.ts';
import type { BoundaryMark, InputUpload, Lease } from '../port.ts';
import { inlined } from './inlined.ts';
import { get } from './taskQueue.ts';
import { WITHIN_BUDGET } from './taskSpend.ts';
import { DB_NOW, FENCE, fence, type TaskTable, type Transition } from './taskTable.ts';

// The boundary write before a paid request leaves, and the request ids the provider names after it.

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
export async function markSubmitStarted(table: TaskTable, id: number, idempotencyKey: string, leaseMs: number, lease: Lease, uploads: readonly InputUpload[] = []): Promise<BoundaryMark> {
  const where = `${FENCE} AND status = 'RUNNING' AND submit_started_at IS NULL`;
  const set = `submit_started_at = ${DB_NOW}, attempts = attempts + 1, idempotency_key = @key::text, charged = 'maybe',
       lease_expires_at = ${DB_NOW} + @leaseMs::bigint, heartbeat_at = ${DB_NOW}`;
  const params = { ...lease, key: idempotencyKey, leaseMs };
  const t: Transition = { actor: 'engine', reason: 'submit started', detail: { idempotencyKey, ...(uploads.length > 0 ? { uploads } : {}) } };
  const [first] = await table.run<Partial<TaskRow> & { budgeted: boolean }>(
    table.sql,
    `${table.transitionWith(`${where} AND NOT (SELECT budgeted FROM project)`, set, 'RUNNING', {
      ...t,
      before: `project AS MATERIALIZED (SELECT budget IS NOT NULL AS budgeted FROM projects
                                          WHERE id = (SELECT project_id FROM tasks WHERE id = @id::bigint) FOR SHARE)`,
    })}
     SELECT changed.*, coalesce((SELECT budgeted FROM project), false) AS budgeted FROM (SELECT) one LEFT JOIN changed ON true`,
    table.transitionParams(id, params, 'RUNNING', t),
  );
  if (first?.id != null) return { marked: table.wake(rowToTask(first as TaskRow)) };
  if (!first?.budgeted) return { refused: 'lease' };
  const held = { ...t, before: `held AS MATERIALIZED (SELECT id FROM tasks WHERE id = @id::bigint AND ${where} FOR NO KEY UPDATE)` };
  const [outcome] = await table.sql.query<{ held: boolean; marked: boolean }>(
    inlined(
      `SELECT 1 FROM projects WHERE id = (SELECT project_id FROM tasks WHERE id = @id::bigint) FOR NO KEY UPDATE;
       ${table.transitionWith(`${where} AND ${WITHIN_BUDGET} AND EXISTS (SELECT 1 FROM held)`, set, 'RUNNING', held)}
       SELECT EXISTS (SELECT 1 FROM held) AS held, EXISTS (SELECT 1 FROM changed) AS marked`,
      table.transitionParams(id, params, 'RUNNING', t),
    ),
  );
  if (!outcome?.held) return { refused: 'lease' };
  const task = (await get(table, id))!;
  return outcome.marked ? { marked: table.wake(task) } : { refused: 'budget', task };
}

/**
 * The provider named the request: the row becomes addressable. Written as soon as the id is heard (a
 * header) and again with what the whole answer adds (handle, quote), so it holds for the same id twice.
 */
export async function recordSubmitted(table: TaskTable, id: number, remote: Omit<RemoteRef, 'model'> & { alias?: string | null }, estimate: { cost: number; source: string } | null, lease: Lease) {
  // Pinned to RUNNING on the hot path; the same id recorded already (a receipt replayed meanwhile) holds too.
  return (await submitted(table, id, remote, estimate, lease, 'RUNNING')) ?? submitted(table, id, remote, estimate, lease, 'SUBMITTED');
}

function submitted(table: TaskTable, id: number, remote: Omit<RemoteRef, 'model'> & { alias?: string | null }, estimate: { cost: number; source: string } | null, lease: Lease, from: 'RUNNING' | 'SUBMITTED') {
  return table.change(
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
export async function noteRequestId(table: TaskTable, id: number, requestId: string, lease: Lease) {
  return table.change(
    id,
    `${fence(lease)} AND status = 'RUNNING' AND submit_started_at IS NOT NULL`,
    `remote_request_id = @requestId::text`,
    { ...lease, requestId },
    { from: 'RUNNING', actor: 'engine', reason: 'the provider named the request; its answer is still arriving', detail: { requestId } },
  );
}

/** The catalogue's estimate, set before the boundary so spend is known even if the provider never answers. */
export async function setEstimate(table: TaskTable, id: number, cost: number, source: string, currency: string, lease: Lease): Promise<boolean> {
  const rows = await table.run(
    table.sql,
    `UPDATE tasks SET cost_estimated = @cost::bigint, cost_estimate_source = @source::text, currency = @currency::text, updated_at = @now::bigint
      WHERE id = @id::bigint AND ${FENCE} RETURNING id`,
    { id, cost, source, currency, ...lease },
  );
  return rows.length === 1;
}

/** The task, other than `exceptTask`, that holds this request at the task's provider. */
export async function requestHolder(table: TaskTable, exceptTask: number, ids: readonly string[]): Promise<Task | undefined> {
  const [row] = await table.run(
    table.sql,
    `SELECT o.* FROM tasks t JOIN tasks o ON o.provider = t.provider AND o.id <> t.id
      WHERE t.id = @exceptTask::bigint AND EXISTS (SELECT 1 FROM unnest(@ids::text[]) i
                                                     WHERE lower(o.remote_request_id) = lower(i) OR lower(o.remote_alias) = lower(i))
      ORDER BY o.id LIMIT 1`,
    { exceptTask, ids },
  );
  return row && rowToTask(row);
}

/** Which of these request ids already belong to a task, so reconciliation never offers another task's request. */
export async function requestIdsInUse(table: TaskTable, provider: string, ids: readonly string[], exceptTask: number): Promise<Set<string>> {
  const rows = await table.run<{ id: string }>(
    table.sql,
    `SELECT c AS id FROM unnest(@ids::text[]) c
      WHERE EXISTS (SELECT 1 FROM tasks WHERE provider = @provider::text AND id <> @exceptTask::bigint
                       AND (lower(remote_request_id) = lower(c) OR lower(remote_alias) = lower(c)))`,
    { provider, ids, exceptTask },
  );
  return new Set(rows.map((r) => r.id));
}
