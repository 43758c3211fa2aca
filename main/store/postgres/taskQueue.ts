import type { Charged, NewTask, Status, Task, TaskEvent } from '../../domain/tasks/model.ts';
import { inputHash } from '../../domain/tasks/inputHash.ts';
import { afterCancelDetail, NOT_SENT_AFTER_CANCEL } from '../../domain/tasks/cancelledAfterPaid.ts';
import { cancelledWith, didNotSucceed, type DependentWords } from '../../domain/tasks/dependentWords.ts';
import { rowToEvent, rowToTask, type EventRow } from '../../domain/tasks/rows.ts';
import type { Sql } from './sql.ts';
import { CLOCK, DB_NOW, jsonOrNull, type TaskTable } from './taskTable.ts';

// The queue: enqueue, a task's history, a person's cancel and the dependents it ends, and what follows a cancel.

/**
 * A cancelled row holding a request named after its cancel that nothing followed or settled since (its process died
 * between the two): no event of that request before the cancel, none after it saying what became of it.
 */
const UNFOLLOWED_AFTER_CANCEL = `status = 'CANCELLED' AND remote_request_id IS NOT NULL AND submit_started_at IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM task_events e WHERE e.task_id = tasks.id AND e.detail_json::json ->> 'requestId' = tasks.remote_request_id
                    AND (e.detail_json::json ->> 'afterCancel' = 'true' OR e.reason LIKE 'request % arrived after the cancel;%'
                         OR e.id < (SELECT max(c.id) FROM task_events c WHERE c.task_id = tasks.id AND c.actor = 'person' AND c.reason = 'cancelled')))`;

export async function enqueue(table: TaskTable, task: NewTask, now: number): Promise<Task> {
  const [row] = await table.run(
    table.sql,
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
  for (const listener of table.claimable) listener();
  return rowToTask(row!);
}

export async function get(table: TaskTable, id: number): Promise<Task | undefined> {
  const [row] = await table.run(table.sql, `SELECT * FROM tasks WHERE id = @id::bigint`, { id });
  return row && rowToTask(row);
}

export async function list(table: TaskTable, filter: { projectId?: number; status?: Status } = {}): Promise<Task[]> {
  const rows = await table.run(
    table.sql,
    `SELECT * FROM tasks WHERE (@projectId::bigint IS NULL OR project_id = @projectId::bigint)
       AND (@status::text IS NULL OR status = @status::text) ORDER BY id`,
    { projectId: filter.projectId ?? null, status: filter.status ?? null },
  );
  return rows.map(rowToTask);
}

export async function events(table: TaskTable, taskId: number): Promise<TaskEvent[]> {
  return (await table.run<EventRow>(table.sql, `SELECT * FROM task_events WHERE task_id = @taskId::bigint ORDER BY id`, { taskId })).map(rowToEvent);
}

/** Something that happened to a task without changing its status, in its history. */
export async function note(table: TaskTable, id: number, reason: string, detail: unknown, now: number): Promise<void> {
  await table.run(
    table.sql,
    `INSERT INTO task_events (task_id, at, from_status, to_status, actor, reason, detail_json)
     SELECT id, @now::bigint, status, status, 'engine', @reason::text, @detail::text FROM tasks WHERE id = @id::bigint`,
    { id, now, reason, detail: jsonOrNull(detail) },
  );
}

/** Work that will still move without a person: active rows, and pending rows not blocked by a failure. */
export async function hasOutstandingWork(table: TaskTable): Promise<boolean> {
  const rows = await table.run(
    table.sql,
    `SELECT 1 FROM tasks t WHERE status IN ('RUNNING', 'SUBMITTED')
        OR (status = 'PENDING' AND NOT EXISTS (
              SELECT 1 FROM task_dependencies d JOIN tasks p ON p.id = d.depends_on
               WHERE d.task_id = t.id AND p.status IN ('FAILED', 'CANCELLED', 'OUTCOME_UNKNOWN')))
      LIMIT 1`,
  );
  return rows.length > 0;
}

/**
 * Every task of the project with this exact provider, model and input, newest first: what a Generate
 * judges a step by (one to reuse, or one paid for whose result was lost).
 */
export async function withSameInput(table: TaskTable, projectId: number, hash: string): Promise<Task[]> {
  const rows = await table.run(table.sql, `SELECT * FROM tasks WHERE project_id = @projectId::bigint AND input_hash = @hash::text ORDER BY id DESC`, {
    projectId,
    hash,
  });
  return rows.map(rowToTask);
}

/** Cancels a task that has not finished. The caller asks the provider to cancel a submitted one. */
export async function cancel(table: TaskTable, id: number, now: number, unbilled = false) {
  return endWithDependents(table, id, now, cancelledWith, (tx) =>
    table.changeIn(
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

export async function notSentAfterCancel(table: TaskTable, id: number, attempt: string, now: number) {
  return table.change(
    id,
    `status = 'CANCELLED' AND idempotency_key = @attempt::text AND remote_request_id IS NULL AND charged = 'maybe'`,
    `charged = 'no'`,
    { now, attempt },
    { from: 'CANCELLED', actor: 'engine', reason: NOT_SENT_AFTER_CANCEL },
  );
}

export async function cancelDependentsOf(table: TaskTable, id: number, now: number): Promise<void> {
  await table.sql.tx((tx) => cancelDependents(table, tx, id, now, cancelledWith));
}

export async function followAfterCancel(table: TaskTable, id: number, requestId: string, reason: string, now: number, notBefore = now, kept?: string) {
  return table.change(
    id,
    `status = 'CANCELLED' AND remote_request_id = @requestId::text AND submit_started_at IS NOT NULL`,
    `status = 'SUBMITTED', charged = 'maybe', submitted_at = coalesce(submitted_at, @now::bigint), finished_at = NULL,
     next_attempt_at = ${DB_NOW} + greatest(0, @notBefore::bigint - @now::bigint), lease_owner = NULL, lease_expires_at = NULL, note = @reason::text`,
    { now, requestId, reason, notBefore },
    { from: 'CANCELLED', actor: 'engine', reason, detail: afterCancelDetail(requestId, kept) },
  );
}

export async function settleFollow(table: TaskTable, id: number, requestId: string, stopped: boolean, charged: Charged | null, reason: string, now: number, kept?: string) {
  return table.change(
    id,
    `status = 'SUBMITTED' AND remote_request_id = @requestId::text AND lease_owner IS NULL`,
    `status = CASE WHEN @stopped::boolean THEN 'CANCELLED' ELSE status END, charged = coalesce(@charged::text, charged),
     finished_at = CASE WHEN @stopped::boolean THEN @now::bigint ELSE finished_at END, next_attempt_at = ${DB_NOW},
     note = CASE WHEN @stopped::boolean THEN NULL ELSE @reason::text END`,
    { now, requestId, reason, stopped, charged },
    { from: 'SUBMITTED', actor: 'engine', reason, detail: afterCancelDetail(requestId, kept) },
  );
}

export async function unfollowedAfterCancel(table: TaskTable): Promise<Task[]> {
  return (await table.run(table.sql, `SELECT * FROM tasks WHERE ${UNFOLLOWED_AFTER_CANCEL} ORDER BY id`, {})).map(rowToTask);
}

/** A task ended without success, and the pending work that needed it with it, as one transaction. */
export async function endWithDependents(table: TaskTable, id: number, now: number, why: (id: number) => DependentWords, end: (tx: Sql) => Promise<Task | undefined>) {
  const task = await table.sql.tx(async (tx) => {
    const ended = await end(tx);
    if (ended) await cancelDependents(table, tx, id, now, why);
    return ended;
  });
  return table.wake(task);
}

/** Pending work that can never run because something it needs failed or was cancelled; `why` words the error. */
export async function cancelDependents(table: TaskTable, tx: Sql, id: number, now: number, why: (id: number) => DependentWords = didNotSucceed): Promise<void> {
  const dependents = await table.run<{ id: number }>(
    tx,
    `SELECT t.id FROM task_dependencies d JOIN tasks t ON t.id = d.task_id
      WHERE d.depends_on = @id::bigint AND t.status = 'PENDING' ORDER BY t.id`,
    { id },
  );
  for (const { id: dep } of dependents) {
    const { error, reason } = why(id);
    const cancelled = await table.transition(
      tx,
      dep,
      `status = 'PENDING'`,
      `status = 'CANCELLED', error = @error::text, finished_at = @now::bigint`,
      { now, error },
      'PENDING',
      { actor: 'engine', reason, detail: { dependsOn: id } },
    );
    if (cancelled) await cancelDependents(table, tx, dep, now, why);
  }
}

/** The pending work a cancel of this task would cancel too (see cancelDependents), nearest first. */
export async function pendingDependents(table: TaskTable, id: number): Promise<Task[]> {
  const rows = await table.run(
    table.sql,
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
export async function related(table: TaskTable, id: number): Promise<{ dependsOn: Task[]; dependents: Task[] }> {
  const dependsOn = await table.run(table.sql, `SELECT t.* FROM task_dependencies d JOIN tasks t ON t.id = d.depends_on WHERE d.task_id = @id::bigint ORDER BY t.id`, { id });
  const dependents = await table.run(table.sql, `SELECT t.* FROM task_dependencies d JOIN tasks t ON t.id = d.task_id WHERE d.depends_on = @id::bigint ORDER BY t.id`, { id });
  return { dependsOn: dependsOn.map(rowToTask), dependents: dependents.map(rowToTask) };
}
