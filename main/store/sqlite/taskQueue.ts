import type { Charged, NewTask, Status, Task, TaskEvent } from '../../domain/tasks/model.ts';
import { inputHash } from '../../domain/tasks/inputHash.ts';
import { afterCancelDetail, NOT_SENT_AFTER_CANCEL } from '../../domain/tasks/cancelledAfterPaid.ts';
import { cancelledWith } from '../../domain/tasks/dependentWords.ts';
import { rowToEvent, rowToTask, type EventRow, type TaskRow } from '../../domain/tasks/rows.ts';
import { refuseIfMoved } from './projectMoves.ts';
import { TaskTable } from './taskTable.ts';

/**
 * A cancelled row holding a request named after its cancel that nothing followed or settled since (its process died
 * between the two): no event of that request before the cancel, none after it saying what became of it.
 */
const UNFOLLOWED_AFTER_CANCEL = `status = 'CANCELLED' AND remote_request_id IS NOT NULL AND submit_started_at IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM task_events e WHERE e.task_id = tasks.id AND json_extract(e.detail_json, '$.requestId') = tasks.remote_request_id
                    AND (json_extract(e.detail_json, '$.afterCancel') = 1 OR e.reason LIKE 'request % arrived after the cancel;%'
                         OR e.id < (SELECT max(c.id) FROM task_events c WHERE c.task_id = tasks.id AND c.actor = 'person' AND c.reason = 'cancelled')))`;

/** The queue: tasks enqueued, read, noted, cancelled with what depends on them, and followed after a cancel. */
export class TaskQueue extends TaskTable {
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

  /** Something that happened to a task without changing its status, in its history. */
  async note(id: number, reason: string, detail: unknown, now: number): Promise<void> {
    this.tx(() => {
      const row = this.stmt(`SELECT status FROM tasks WHERE id = ?`).get(id) as { status: Status } | undefined;
      if (row) this.event(id, now, row.status, row.status, { actor: 'engine', reason, detail });
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
   * Every task of the project with this exact provider, model and input, newest first: what a Generate
   * judges a step by (one to reuse, or one paid for whose result was lost).
   */
  async withSameInput(projectId: number, hash: string): Promise<Task[]> {
    const rows = this.stmt(`SELECT * FROM tasks WHERE project_id = ? AND input_hash = ? ORDER BY id DESC`).all(projectId, hash) as TaskRow[];
    return rows.map(rowToTask);
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
}
