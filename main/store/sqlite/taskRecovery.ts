import type { Status, Task } from '../../domain/tasks/model.ts';
import { requestNames } from '../../domain/tasks/requestHeld.ts';
import { rowToTask, type TaskRow } from '../../domain/tasks/rows.ts';
import { refuseIfTaskMoved } from './projectMoves.ts';
import { TaskTable, LEASED, RESUBMITTED } from './taskTable.ts';

/**
 * A task that sent one request only and holds its id: a listed request of another id is not its own, so it makes no
 * lookup of the same input ambiguous (its own is marked taken there).
 */
const ONE_KNOWN_REQUEST = `(remote_request_id IS NOT NULL AND attempts = 1)`;

/**
 * A row whose request is looked for at the provider (see dueForLookup), as `t`: an unknown outcome, or a task cancelled
 * while its request was being sent, which may have left and be charged.
 */
const LOOKED_FOR = `(t.status = 'OUTCOME_UNKNOWN' OR (t.status = 'CANCELLED' AND t.submit_started_at IS NOT NULL AND t.charged = 'maybe' AND t.idempotency_key IS NOT NULL))`;

/** Another task of the same provider holds any of @ids (a JSON array): every name the provider gives one request. */
const HELD_ANY = `EXISTS (SELECT 1 FROM tasks o, json_each(@ids) i WHERE o.provider = tasks.provider AND o.id <> tasks.id
                            AND (lower(o.remote_request_id) = lower(i.value) OR lower(o.remote_alias) = lower(i.value)))`;

/** Recovery: expired leases, unknown outcomes looked up by the engine, and what a person decides about them. */
export class TaskRecovery extends TaskTable {
  /** Leased rows whose lease ran out (or whose owner is known dead), for the recovery sweep. */
  async expiredLeases(now: number): Promise<Task[]> {
    return (this.stmt(`SELECT * FROM tasks WHERE ${LEASED} AND lease_expires_at < ? ORDER BY id`).all(now) as TaskRow[]).map(
      rowToTask,
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
}
