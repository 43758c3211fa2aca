import type { Kind, Task } from '../../domain/tasks/model.ts';
import { rowToTask, type TaskRow } from '../../domain/tasks/rows.ts';
import type { Lease } from '../port.ts';
import { TaskTable, LEASED, FENCE, fence } from './taskTable.ts';

/** Claims and leases: work taken, held, renewed and given back by the worker that holds it. */
export class TaskLeases extends TaskTable {
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

  /** Saves progress (a poll's, a render's) and extends the lease in the same write. */
  async saveProgress(id: number, progress: number | null, leaseMs: number, lease: Lease): Promise<boolean> {
    const r = this.stmt(
      `UPDATE tasks SET progress = coalesce(@progress, progress), lease_expires_at = @now + @leaseMs,
              heartbeat_at = @now, updated_at = @now
        WHERE id = @id AND ${FENCE} AND ${LEASED}`,
    ).run({ id, progress, leaseMs, ...lease });
    return r.changes === 1;
  }

  /** What the engine is waiting on, for the person; no state changes, so no event. */
  async setNote(id: number, note: string | null, lease: Lease): Promise<boolean> {
    return this.stmt(`UPDATE tasks SET note = @note, updated_at = @now WHERE id = @id AND ${FENCE}`).run({ id, note, ...lease }).changes === 1;
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
}
