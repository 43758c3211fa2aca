import type { Task } from '../../domain/tasks/model.ts';
import { requestNames } from '../../domain/tasks/requestHeld.ts';
import { didNotSucceed } from '../../domain/tasks/dependentWords.ts';
import { rowToTask, type TaskRow } from '../../domain/tasks/rows.ts';
import { endWithDependents } from './taskQueue.ts';
import { CLOCK, DB_NOW, LEASED, RESUBMITTED, type TaskTable, type Transition } from './taskTable.ts';

// Recovery: expired leases, unknown outcomes, the lookups the engine makes for them, and a person's decisions.

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
const HELD_ANY = `EXISTS (SELECT 1 FROM tasks o, json_array_elements_text(@ids::json) i WHERE o.provider = tasks.provider AND o.id <> tasks.id
                            AND (lower(o.remote_request_id) = lower(i) OR lower(o.remote_alias) = lower(i)))`;

/** LOCK_REQUEST for every name in @ids, taken in one order so two writes naming the same request never wait on each other. */
const LOCK_REQUESTS = `SELECT pg_advisory_xact_lock(hashtext('studio.task.request'), hashtext(n))
                         FROM (SELECT DISTINCT lower(i) AS n FROM json_array_elements_text(@ids::json) i ORDER BY 1) names`;

/** Leased rows whose lease ran out by the database's clock (or whose owner is known dead), for the recovery sweep. */
export async function expiredLeases(table: TaskTable, _now: number): Promise<Task[]> {
  const rows = await table.run(table.sql, `WITH ${CLOCK} SELECT * FROM tasks WHERE ${LEASED} AND lease_expires_at < ${DB_NOW} ORDER BY id`);
  return rows.map(rowToTask);
}

/** Ends the leases of owners that are known to be gone, so their rows are recovered now. */
export async function expireLeasesOf(table: TaskTable, owners: string[], now: number): Promise<number> {
  if (owners.length === 0) return 0;
  const [row] = await table.run<{ n: number }>(
    table.sql,
    `WITH ${CLOCK},
     expired AS (UPDATE tasks SET lease_expires_at = ${DB_NOW} - 1 WHERE lease_owner = ANY(@owners::text[]) AND ${LEASED}
                 RETURNING id, status, lease_owner),
     event AS (INSERT INTO task_events (task_id, at, from_status, to_status, actor, reason, detail_json)
               SELECT id, @now::bigint, status, status, 'engine', 'its worker process is gone; recovering it now',
                      json_build_object('owner', lease_owner)::text
                 FROM expired)
     SELECT count(*) AS n FROM expired`,
    { owners, now },
  );
  return row!.n;
}

/** Back to the queue, each row only if nothing of it was sent (see recoverAll). */
export async function recoverRequeueAll(table: TaskTable, tasks: readonly Task[], now: number, reason: string): Promise<Task[]> {
  return recoverAll(
    table,
    tasks.map((task) => ({ task, reason })),
    now,
    `submit_started_at IS NULL`,
    `status = 'PENDING', lease_owner = NULL, lease_expires_at = NULL, heartbeat_at = NULL, next_attempt_at = ${DB_NOW}`,
  );
}

/** Parked as unknown, each row with its own reason (see recoverAll). */
export async function recoverParkAll(table: TaskTable, rows: readonly { task: Task; reason: string }[], now: number): Promise<Task[]> {
  return recoverAll(
    table,
    rows,
    now,
    'true',
    `status = 'OUTCOME_UNKNOWN', unknown_reason = seen.reason, charged = 'maybe', lease_owner = NULL, lease_expires_at = NULL,
     finished_at = @now::bigint`,
  );
}

/**
 * The recovery sweep's write over many rows, in one statement with their events. A row changes only if it is
 * still exactly as the sweep saw it (no renewal, takeover or request id in between: the same owner and expiry,
 * still RUNNING) and its lease has run out by the database's clock, whatever the caller's clock says.
 */
async function recoverAll(table: TaskTable, rows: readonly { task: Task; reason: string }[], now: number, where: string, set: string): Promise<Task[]> {
  if (rows.length === 0) return [];
  const changed = await table.run(
    table.sql,
    `WITH ${CLOCK},
     seen AS (SELECT * FROM unnest(@ids::bigint[], @owners::text[], @expiries::bigint[], @reasons::text[]) AS s(id, owner, expiry, reason)),
     changed AS (
       UPDATE tasks SET ${set}, updated_at = @now::bigint FROM seen
        WHERE tasks.id = seen.id AND tasks.lease_owner = seen.owner AND tasks.lease_expires_at = seen.expiry
          AND tasks.lease_expires_at < ${DB_NOW} AND tasks.status = 'RUNNING' AND (${where})
       RETURNING tasks.*, seen.reason AS recovery_reason),
     event AS (INSERT INTO task_events (task_id, at, from_status, to_status, actor, reason)
               SELECT id, @now::bigint, 'RUNNING', status, 'engine', recovery_reason FROM changed ORDER BY id)
     SELECT * FROM changed ORDER BY id`,
    {
      ids: rows.map((r) => r.task.id),
      owners: rows.map((r) => r.task.leaseOwner),
      expiries: rows.map((r) => r.task.leaseExpiresAt),
      reasons: rows.map((r) => r.reason),
      now,
    },
  );
  const tasks = changed.map(rowToTask);
  if (tasks.length > 0) for (const listener of table.claimable) listener();
  return tasks;
}

// ---- Lookups the engine makes on its own -------------------------------------------------

/**
 * Takes the lookups due of these providers' unknown outcomes: fewer than `maxTries` made since the task was
 * parked, none of them ending in a question for the person, the last one (or the parking) at least `intervalMs`
 * ago. Lookups are events whose detail has `lookup` (see lookupNoted); `tries` counts those of this parking.
 * A task whose request id is known is not looked up: it was parked because the provider stopped answering
 * about that request, and adopting it again would only start the same polling over, without end.
 *
 * Taking one moves its lookup_due_at an interval on, by the database's clock, in this statement: the machines of
 * a team (each with its own clock) make one lookup per task per interval between them, and each counts as one try.
 * Rows another machine is taking are skipped, and the update checks the latest version of each row again.
 */
export async function dueForLookup(table: TaskTable, providers: readonly string[], maxTries: number, intervalMs: number, now: number, limit: number): Promise<{ task: Task; tries: number }[]> {
  const rows = await table.run<TaskRow & { lookup_tries: number }>(
    table.sql,
    `WITH ${CLOCK},
     due AS MATERIALIZED (
       SELECT t.id, l.tries, coalesce(l.last, t.finished_at) AS since
         FROM tasks t,
              LATERAL (SELECT count(*) FILTER (WHERE d.detail ->> 'lookup' IS NOT NULL) AS tries,
                              max(e.at) FILTER (WHERE d.detail ->> 'lookup' IS NOT NULL) AS last,
                              count(*) FILTER (WHERE d.detail ->> 'verdict' = 'ask') AS asked
                         FROM task_events e, LATERAL (SELECT e.detail_json::json AS detail) d
                        WHERE e.task_id = t.id AND e.at >= t.finished_at AND e.detail_json IS NOT NULL) l
        WHERE ${LOOKED_FOR} AND t.remote_request_id IS NULL AND t.provider = ANY(@providers::text[])
          AND (t.lookup_due_at IS NULL OR t.lookup_due_at <= ${DB_NOW})
          AND l.asked = 0 AND l.tries < @maxTries::bigint AND coalesce(l.last, t.finished_at) + @intervalMs::bigint <= @now::bigint
        ORDER BY 3 LIMIT @limit::bigint
          FOR NO KEY UPDATE OF t SKIP LOCKED),
     taken AS (
       UPDATE tasks SET lookup_due_at = ${DB_NOW} + @intervalMs::bigint FROM due
        WHERE tasks.id = due.id AND tasks.status IN ('OUTCOME_UNKNOWN', 'CANCELLED') AND (tasks.lookup_due_at IS NULL OR tasks.lookup_due_at <= ${DB_NOW})
       RETURNING tasks.*, due.tries AS lookup_tries, due.since AS lookup_since)
     SELECT * FROM taken ORDER BY lookup_since, id`,
    { providers, maxTries, intervalMs, now, limit },
  );
  return rows.map((r) => ({ task: rowToTask(r), tries: r.lookup_tries }));
}

/** The providers of the tasks whose outcome is unknown. */
export async function unknownProviders(table: TaskTable): Promise<string[]> {
  const rows = await table.run<{ provider: string }>(table.sql, `SELECT DISTINCT provider FROM tasks t WHERE ${LOOKED_FOR} AND t.remote_request_id IS NULL`);
  return rows.map((r) => r.provider);
}

/**
 * A lookup made for an unknown outcome, in its history: `detail.lookup` is its number, `detail.verdict` what came
 * of it. Kept only while the row is still that attempt's unknown outcome, so a lookup that outlived a resubmit
 * neither counts as one of the next parking's lookups nor asks the person about it.
 */
export async function lookupNoted(table: TaskTable, id: number, attempt: string | null, reason: string, detail: { lookup: number; verdict: 'again' | 'ask' } & Record<string, unknown>, now: number): Promise<void> {
  await table.run(
    table.sql,
    `INSERT INTO task_events (task_id, at, from_status, to_status, actor, reason, detail_json)
     SELECT id, @now::bigint, status, status, 'engine', @reason::text, @detail::text FROM tasks t
      WHERE id = @id::bigint AND ${LOOKED_FOR} AND idempotency_key IS NOT DISTINCT FROM @attempt::text`,
    { id, attempt, reason, detail: JSON.stringify(detail), now },
  );
}

/**
 * Other tasks that sent this input (same provider, model and input) in a window overlapping [from, to]:
 * from their send's start to the provider's naming of the request, or to their end, or to now.
 */
export async function sameInputOverlapping(table: TaskTable, task: Pick<Task, 'id' | 'inputHash'>, from: number, to: number): Promise<number[]> {
  const rows = await table.run<{ id: number }>(
    table.sql,
    `SELECT id FROM tasks WHERE input_hash = @hash::text AND id <> @id::bigint AND submit_started_at IS NOT NULL AND NOT ${ONE_KNOWN_REQUEST}
        AND submit_started_at <= @to::bigint AND coalesce(submitted_at, finished_at, @to::bigint) >= @from::bigint ORDER BY id`,
    { hash: task.inputHash, id: task.id, from, to },
  );
  return rows.map((r) => r.id);
}

export async function unendedBefore(table: TaskTable, provider: string, sentAt: number, exceptTask: number): Promise<Task[]> {
  const rows = await table.run(
    table.sql,
    `SELECT * FROM tasks WHERE provider = @provider::text AND id <> @id::bigint AND submit_started_at < @sentAt::bigint
        AND (status IN ('RUNNING', 'SUBMITTED', 'OUTCOME_UNKNOWN') OR (status IN ('SUCCEEDED', 'FAILED', 'CANCELLED') AND finished_at > @sentAt::bigint))
      ORDER BY submit_started_at, id`,
    { provider, id: exceptTask, sentAt },
  );
  return rows.map(rowToTask);
}

/**
 * The engine adopts the request a lookup found to be exactly the one sent (see lookupVerdict), as a person's
 * adoption does and under the same conditions, recording why and the evidence, and telling the person on the row.
 * Only for the attempt the lookup was made for (`attempt`, its idempotency key): a person may have resubmitted
 * while the lookup was under way, and what it found for the earlier send is no proof about the next one.
 */
export async function adoptFound(table: TaskTable, id: number, attempt: string | null, requestId: string, why: string, evidence: Record<string, unknown>, now: number, aliases: readonly string[] = []) {
  return adoption(
    table,
    id,
    `status = 'OUTCOME_UNKNOWN' AND idempotency_key IS NOT DISTINCT FROM @attempt::text AND NOT ${HELD_ANY}`,
    `, note = @note::text`,
    { now, attempt, ...requestNames(requestId, aliases), note: `adopted by the studio after a lookup: request ${requestId}, ${why}` },
    { from: 'OUTCOME_UNKNOWN', actor: 'engine', reason: `adopted by the studio after a lookup: ${why}`, detail: { ...evidence, adopted: requestId } },
  );
}

export async function foundAfterCancel(table: TaskTable, id: number, attempt: string | null, requestId: string, why: string, evidence: Record<string, unknown>, now: number, aliases: readonly string[] = []) {
  const params = { now, attempt, ...requestNames(requestId, aliases) };
  const task = await table.sql.tx(async (tx) => {
    await table.run(tx, LOCK_REQUESTS, params);
    return table.changeIn(
      tx,
      id,
      `status = 'CANCELLED' AND idempotency_key IS NOT DISTINCT FROM @attempt::text AND remote_request_id IS NULL AND NOT ${HELD_ANY}`,
      `remote_request_id = @requestId::text, remote_alias = @alias::text`,
      params,
      { from: 'CANCELLED', actor: 'engine', reason: `found the request sent before the cancel after a lookup: ${why}`, detail: { ...evidence, requestId } },
    );
  });
  return table.wake(task);
}

// ---- A person's decisions ---------------------------------------------------------------

/**
 * No row changed means the task moved on, or the request already belongs to another task of the same
 * provider (see requestHolder): the check is part of this write, made under the request's lock, so two
 * adoptions racing on any machines cannot both take one request, which would count one result twice and
 * drop the other task's request from the spend.
 */
export async function adopt(table: TaskTable, id: number, requestId: string, now: number, aliases: readonly string[] = []) {
  return adoption(
    table,
    id,
    `status = 'OUTCOME_UNKNOWN' AND NOT ${HELD_ANY}`,
    '',
    { now, ...requestNames(requestId, aliases) },
    { from: 'OUTCOME_UNKNOWN', actor: 'person', reason: 'adopted a request id found at the provider', detail: { requestId } },
  );
}

async function adoption(table: TaskTable, id: number, where: string, alsoSet: string, params: Record<string, unknown> & ReturnType<typeof requestNames>, t: Transition) {
  const task = await table.sql.tx(async (tx) => {
    await table.run(tx, LOCK_REQUESTS, params);
    return table.changeIn(
      tx,
      id,
      where,
      `status = 'SUBMITTED', remote_request_id = @requestId::text, remote_alias = @alias::text, remote_handle = NULL, submitted_at = @now::bigint, next_attempt_at = ${DB_NOW},
       charged = 'yes', unknown_reason = NULL, finished_at = NULL, lease_owner = NULL, lease_expires_at = NULL${alsoSet}`,
      params,
      t,
    );
  });
  return table.wake(task);
}

export async function resubmit(table: TaskTable, id: number, now: number, detail?: Record<string, unknown>) {
  return table.change(
    id,
    `status = 'OUTCOME_UNKNOWN'`,
    `status = 'PENDING', cost_abandoned = cost_abandoned + coalesce(cost_estimated, 0), charged = 'no',
     submit_started_at = NULL, idempotency_key = NULL, remote_request_id = NULL, remote_alias = NULL, remote_handle = NULL, submitted_at = NULL,
     unknown_reason = NULL, finished_at = NULL, next_attempt_at = ${DB_NOW}, progress = NULL`,
    { now },
    { from: 'OUTCOME_UNKNOWN', actor: 'person', reason: RESUBMITTED, ...(detail ? { detail } : {}) },
  );
}

export async function giveUp(table: TaskTable, id: number, now: number) {
  return endWithDependents(table, id, now, didNotSucceed, (tx) =>
    table.changeIn(
      tx,
      id,
      `status = 'OUTCOME_UNKNOWN'`,
      `status = 'FAILED', error = 'given up after an unknown outcome', finished_at = @now::bigint`,
      { now },
      { from: 'OUTCOME_UNKNOWN', actor: 'person', reason: 'gave up; still counted as possibly charged' },
    ),
  );
}
