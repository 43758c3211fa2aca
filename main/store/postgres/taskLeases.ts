import type { Kind, Task } from '../../domain/tasks/model.ts';
import { rowToTask } from '../../domain/tasks/rows.ts';
import type { Lease } from '../port.ts';
import { inlined } from './inlined.ts';
import { CLOCK, DB_NOW, DUE_AT, FENCE, fence, LEASED, type TaskTable } from './taskTable.ts';

// Claims and leases: taking work, holding it while it runs, and giving it back (requeued, parked, released).

/**
 * Taken by a claim just before it counts. The claim counts the kind's leased rows and takes that many fewer, but a
 * statement counts what had committed when it began: two machines claiming at once would each see the other's
 * slots free and together run more than the concurrency. With this lock only one counts at a time, and the count
 * is a statement after it, so it reads every claim committed before the lock was granted. SKIP LOCKED alone cannot
 * do it: it keeps claims from waiting on each other's rows, not from each counting the same free slots.
 *
 * The lock and the claim go to the server as one script (see claim), which runs to its end and commits whatever the
 * sender does meanwhile: a machine that stops (suspended, its link stalled) right after sending it holds the lock
 * for no longer than the claim takes on the server. The lock is tried, never waited for, and what it gave is kept for
 * the transaction (set_config local), for the claim to read: a claim that finds it held claims nothing this time.
 */
const LOCK_CLAIM = `SELECT set_config('studio.claim_granted', pg_try_advisory_xact_lock(hashtext('studio.task.claim'), hashtext(@kind::text))::text, true)`;
const CLAIM_GRANTED = `current_setting('studio.claim_granted', true) = 'true'`;

/**
 * Claims up to the free slots of one kind in one statement, sent with the kind's claim lock in one round trip
 * (see LOCK_CLAIM): fresh work whose dependencies all succeeded,
 * submitted work nobody holds (an adopted request), and rows whose lease ran out under another owner (unless
 * `reclaimExpired` is off, as it is just after a system sleep, while the other owners renew). A SUBMITTED row
 * stays SUBMITTED, so its saved request id sends it to polling, never back through submit. The free slots are
 * the concurrency less every machine's rows of the kind under an unexpired lease, and less this owner's own
 * rows even when their lease ran out (a held lock stopped the heartbeat): they are still running here. Rows
 * another transaction holds are skipped (SKIP LOCKED), never waited for. They are locked as the UPDATE locks
 * them (FOR NO KEY UPDATE rather than FOR UPDATE): the key never changes, so an enqueue whose dependency is one
 * of them checks its foreign key without waiting, and such a row is not skipped for it.
 */
export async function claim(table: TaskTable, kind: Kind, concurrency: number, leaseMs: number, lease: Lease, reclaimExpired = true): Promise<Task[]> {
  // Lock and claim in one round trip (see LOCK_CLAIM); only the ids come back, so the server's answer is small
  // enough never to wait on a stopped reader while the lock is held. The rows are read after, with no lock.
  const claimed = await table.sql.query<{ id: number }>(
    inlined(
      `${LOCK_CLAIM};
       WITH ${CLOCK},
       slots AS (
         SELECT CASE WHEN ${CLAIM_GRANTED} THEN greatest(0, @concurrency::bigint - count(*)) ELSE 0 END AS n FROM tasks
          WHERE kind = @kind::text AND ${LEASED} AND (lease_expires_at >= ${DB_NOW} OR lease_owner = @owner::text)),
       held AS (
         SELECT id FROM tasks
          WHERE kind = @kind::text AND ${LEASED} AND next_attempt_at <= ${DB_NOW}
            AND (lease_owner IS NULL OR (@reclaim::boolean AND lease_expires_at < ${DB_NOW} AND lease_owner <> @owner::text))
          ORDER BY lease_expires_at NULLS FIRST LIMIT (SELECT n FROM slots)
            FOR NO KEY UPDATE SKIP LOCKED),
       fresh AS (
         SELECT id FROM tasks t
          WHERE kind = @kind::text AND status = 'PENDING' AND next_attempt_at <= ${DB_NOW}
            AND NOT EXISTS (SELECT 1 FROM task_dependencies d JOIN tasks p ON p.id = d.depends_on
                             WHERE d.task_id = t.id AND p.status <> 'SUCCEEDED')
          ORDER BY created_at, id LIMIT (SELECT n FROM slots) - (SELECT count(*) FROM held)
            FOR NO KEY UPDATE OF t SKIP LOCKED),
       claimed AS (
         UPDATE tasks
            SET lease_owner = @owner::text, lease_expires_at = ${DB_NOW} + @leaseMs::bigint, heartbeat_at = ${DB_NOW},
                updated_at = @now::bigint, status = CASE WHEN status = 'PENDING' THEN 'RUNNING' ELSE status END
          WHERE id IN (SELECT id FROM held UNION ALL SELECT id FROM fresh)
         RETURNING *),
       event AS (
         INSERT INTO task_events (task_id, at, from_status, to_status, actor, reason, detail_json)
         SELECT id, @now::bigint, CASE WHEN status = 'SUBMITTED' THEN 'SUBMITTED' ELSE 'PENDING' END, status, 'engine',
                CASE WHEN status = 'SUBMITTED' THEN 'reclaimed to poll its saved request' ELSE 'claimed' END, @detail::text
           FROM claimed)
       SELECT id FROM claimed ORDER BY id`,
      // The recovery sweep requeues expired RUNNING rows before each claim, so a RUNNING row came from PENDING.
      { kind, concurrency, owner: lease.owner, now: lease.now, leaseMs, reclaim: reclaimExpired, detail: JSON.stringify({ owner: lease.owner }) },
    ),
  );
  if (claimed.length === 0) return [];
  const rows = await table.run(table.sql, `SELECT * FROM tasks WHERE id = ANY(@ids::bigint[]) AND lease_owner = @owner::text ORDER BY id`, {
    ids: claimed.map((r) => r.id),
    owner: lease.owner,
  });
  return rows.map(rowToTask);
}

/** Saves progress (a poll's, a render's) and extends the lease in the same write. */
export async function saveProgress(table: TaskTable, id: number, progress: number | null, leaseMs: number, lease: Lease): Promise<boolean> {
  const rows = await table.run(
    table.sql,
    `WITH ${CLOCK}
     UPDATE tasks SET progress = coalesce(@progress::double precision, progress), lease_expires_at = ${DB_NOW} + @leaseMs::bigint,
            heartbeat_at = ${DB_NOW}, updated_at = @now::bigint
      WHERE id = @id::bigint AND ${FENCE} AND ${LEASED} RETURNING id`,
    { id, progress, leaseMs, ...lease },
  );
  return rows.length === 1;
}

/** What the engine is waiting on, for the person; no state changes, so no event. */
export async function setNote(table: TaskTable, id: number, note: string | null, lease: Lease): Promise<boolean> {
  const rows = await table.run(table.sql, `UPDATE tasks SET note = @note::text, updated_at = @now::bigint WHERE id = @id::bigint AND ${FENCE} RETURNING id`, {
    id,
    note,
    ...lease,
  });
  return rows.length === 1;
}

/** Back to the queue, as if never sent: only for outcomes that prove the request was not applied. */
export async function requeue(table: TaskTable, id: number, nextAttemptAt: number, reason: string, lease: Lease, detail?: unknown) {
  return table.change(
    id,
    `${fence(lease)} AND status = 'RUNNING'`,
    `status = 'PENDING', next_attempt_at = ${DUE_AT('nextAttemptAt')}, submit_started_at = NULL, idempotency_key = NULL,
     charged = 'no', lease_owner = NULL, lease_expires_at = NULL, heartbeat_at = NULL`,
    { ...lease, nextAttemptAt },
    { from: 'RUNNING', actor: 'engine', reason, detail },
  );
}

/** `from` pins the state the caller saw, so a row that became SUBMITTED meanwhile is never parked. */
export async function parkUnknown(table: TaskTable, id: number, reason: string, lease: Lease, from: 'RUNNING' | 'SUBMITTED' = 'RUNNING') {
  return table.change(
    id,
    `${fence(lease)} AND status = @from::text`,
    `status = 'OUTCOME_UNKNOWN', unknown_reason = @reason::text, charged = 'maybe', note = NULL,
     lease_owner = NULL, lease_expires_at = NULL, finished_at = @now::bigint`,
    { ...lease, reason, from },
    { from, actor: 'engine', reason },
  );
}

/**
 * The heartbeat: one write renews the leases of the tasks an owner is working on; the ids that come
 * back tell it which it still holds. Only running work is renewed, so a row nobody works on expires.
 */
export async function renewLeases(table: TaskTable, ids: readonly number[], leaseMs: number, lease: Lease): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await table.run<{ id: number }>(
    table.sql,
    `WITH ${CLOCK}
     UPDATE tasks SET lease_expires_at = ${DB_NOW} + @leaseMs::bigint, heartbeat_at = ${DB_NOW}
      WHERE id = ANY(@ids::bigint[]) AND ${FENCE} AND ${LEASED} RETURNING id`,
    { ids, leaseMs, owner: lease.owner },
  );
  return new Set(rows.map((r) => r.id));
}

/** The renewal before a send: only a row still RUNNING at the attempt this owner marked. */
export async function renewMarked(table: TaskTable, id: number, leaseMs: number, lease: Lease & { attempt: string }): Promise<boolean> {
  const rows = await table.run(
    table.sql,
    `WITH ${CLOCK}
     UPDATE tasks SET lease_expires_at = ${DB_NOW} + @leaseMs::bigint, heartbeat_at = ${DB_NOW}
      WHERE id = @id::bigint AND ${fence(lease)} AND status = 'RUNNING' RETURNING id`,
    { id, leaseMs, owner: lease.owner, attempt: lease.attempt },
  );
  return rows.length === 1;
}

/**
 * Gives a row back when its executor stopped without finishing it: a submitted one is released so any
 * worker, this one included, polls it again; a running one expires for the recovery sweep to judge.
 */
export async function expireLease(table: TaskTable, id: number, lease: Lease): Promise<boolean> {
  return !!(await table.change(
    id,
    `${FENCE} AND ${LEASED}`,
    `lease_owner = CASE WHEN status = 'SUBMITTED' THEN NULL ELSE lease_owner END,
     lease_expires_at = CASE WHEN status = 'SUBMITTED' THEN NULL ELSE ${DB_NOW} - 1 END`,
    { ...lease },
    { from: 'kept', actor: 'engine', reason: 'released: its worker stopped before finishing it', detail: { owner: lease.owner } },
  ));
}

/** Releases a submitted row to be polled again no sooner than `notBefore`, saying why on the row. */
export async function retryLater(table: TaskTable, id: number, notBefore: number, note: string, lease: Lease, detail?: Record<string, unknown>): Promise<boolean> {
  return !!(await table.change(
    id,
    `${FENCE} AND status = 'SUBMITTED'`,
    `lease_owner = NULL, lease_expires_at = NULL, next_attempt_at = ${DUE_AT('notBefore')}, note = @note::text`,
    { ...lease, notBefore, note },
    { from: 'SUBMITTED', actor: 'engine', reason: note, detail: { ...detail, notBefore } },
  ));
}
