import { hostname } from 'node:os';
import type { Actor, Status, Task } from '../../domain/tasks/model.ts';
import { rowToTask, type TaskRow } from '../../domain/tasks/rows.ts';
import type { Lease } from '../port.ts';
import { named } from './named.ts';
import type { Sql } from './sql.ts';

export interface Transition {
  /**
   * The status the write's condition already pins, or 'kept' when the write never changes the status, or 'read'
   * to read it in the same statement under the row's lock (see transitionWith). Without it the row is locked and
   * its status read first, so the event names the status the write really left.
   */
  from?: Status | 'kept' | 'read';
  actor: Actor;
  reason: string;
  detail?: unknown;
  /** More writes of the same transition, as further WITH queries reading the updated row from `changed`. */
  also?: string;
  /** WITH queries the update reads, run before it. */
  before?: string;
  /** An SQL expression for the event's detail as JSON text, read in the statement: in place of `detail`. */
  detailFrom?: string;
  /** An SQL expression over the updated row for the event's reason, read in the statement (`@eventReason` is `reason`). */
  reasonFrom?: string;
}

/**
 * The database's clock in milliseconds. Lease times (lease_expires_at, heartbeat_at), next_attempt_at, and every
 * comparison with them use it, so a machine whose clock runs ahead cannot take a lease early, and one whose clock
 * runs behind still claims what others enqueued. A caller's time for next_attempt_at is kept as its delay from
 * the caller's now, applied to the database's clock (see DUE_AT). So are a send's window (submit_started_at,
 * submitted_at): lookups compare it with the provider's times, and a machine whose clock is wrong must not move it
 * out of where the provider lists the request. Every other time (created_at, updated_at, events' `at`) is the
 * caller's, which in team mode is the database's clock as the caller measured it (see DatabaseClock).
 */
export const CLOCK = `clock AS (SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint AS ms)`;
export const DB_NOW = `(SELECT ms FROM clock)`;

/** The caller's absolute time in the parameter `at`, as the same delay from now by the database's clock. */
export const DUE_AT = (at: string) => `${DB_NOW} + (@${at}::bigint - @now::bigint)`;

export const LEASED = `status IN ('RUNNING', 'SUBMITTED')`;

// Ownership is the fence: a takeover or a recovery changes lease_owner, and recovery writes are themselves
// conditioned on the exact lease they saw, so an owner that was only asleep may renew and carry on.
export const FENCE = `lease_owner = @owner::text`;

/** A write after the boundary mark also names the attempt it marked (see Lease.attempt). */
export const fence = (lease: Lease) => (lease.attempt === undefined ? FENCE : `${FENCE} AND idempotency_key = @attempt::text`);

/** What a person's resubmit says in the task's history; a late receipt reads it back (see ABANDONED_AT_KEY in taskReceipts.ts). */
export const RESUBMITTED = 'resubmitted: the earlier attempt may also have been charged';

export const jsonOrNull = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));

/**
 * What the task store's modules share: the connection, this host's name (on the files it saves), the listeners told
 * when work may be claimable, and the conditioned write every transition goes through with its event.
 */
export class TaskTable {
  readonly claimable = new Set<() => void>();

  constructor(
    readonly sql: Sql,
    readonly machine: string = hostname(),
    /** Tells this machine from another of the same name on the files it saves (see config/machineId.ts); null where unknown. */
    readonly machineId: string | null = null,
  ) {}

  run<R = TaskRow>(q: Sql, text: string, params: Readonly<Record<string, unknown>> = {}): Promise<R[]> {
    const { text: numbered, values } = named(text, params);
    return q.query<R>(numbered, values);
  }

  /**
   * Calls `listener` when a write of this process may have left work to claim or a slot free (a task enqueued,
   * or one let go of: finished, requeued, released), once the write is made. Returns the unsubscribe.
   */
  onClaimable(listener: () => void): () => void {
    this.claimable.add(listener);
    return () => this.claimable.delete(listener);
  }

  wake<T extends Task | undefined>(task: T): T {
    if (task && task.leaseOwner === null) for (const listener of this.claimable) listener();
    return task;
  }

  /**
   * Updates one row if `where` still holds and logs the transition in the same statement. Returns the updated
   * task, or undefined when the condition no longer holds (lease lost, state moved on). Wakes no one: see change.
   */
  async transition(q: Sql, id: number, where: string, set: string, params: Record<string, unknown>, from: Status | 'kept' | 'read', t: Transition) {
    const [row] = await this.run(q, `${this.transitionWith(where, set, from, t)} SELECT * FROM changed`, this.transitionParams(id, params, from, t));
    return row && rowToTask(row);
  }

  /**
   * The WITH queries of a transition; `changed` holds the updated row. With `from` 'read', `seen` locks the row
   * and reads its status before the update runs (the update's condition waits for it): a lock returns the row's
   * latest version, which is the one the update then changes, however the row moved since the statement began.
   */
  transitionWith(where: string, set: string, from: Status | 'kept' | 'read', t: Transition): string {
    const read = from === 'read';
    const eventFrom = from === 'kept' ? 'status' : read ? '(SELECT status FROM seen)' : '@eventFrom::text';
    return `WITH ${CLOCK}, ${t.before ? `${t.before},` : ''}
       ${read ? 'seen AS MATERIALIZED (SELECT status FROM tasks WHERE id = @id::bigint FOR NO KEY UPDATE),' : ''}
       changed AS (UPDATE tasks SET ${set}, updated_at = @now::bigint
                    WHERE id = @id::bigint AND (${where})${read ? ' AND (SELECT status FROM seen) IS NOT NULL' : ''} RETURNING *),
       event AS (INSERT INTO task_events (task_id, at, from_status, to_status, actor, reason, detail_json)
                 SELECT id, @now::bigint, ${eventFrom}, status, @eventActor::text, ${t.reasonFrom ?? '@eventReason::text'}, ${t.detailFrom ?? '@eventDetail::text'}
                   FROM changed)
       ${t.also ?? ''}`;
  }

  transitionParams(id: number, params: Record<string, unknown>, from: Status | 'kept' | 'read', t: Transition): Record<string, unknown> {
    return { ...params, id, eventFrom: from, eventActor: t.actor, eventReason: t.reason, eventDetail: jsonOrNull(t.detail) };
  }

  /** A transition as one transaction, waking the listeners when it let go of the row. */
  async change(id: number, where: string, set: string, params: Record<string, unknown>, t: Transition) {
    return this.wake(await this.changeIn(this.sql, id, where, set, params, t));
  }

  /**
   * A transition within `q`. One whose status is not pinned locks the row and reads it first, in a transaction:
   * the status a statement reads is the one of its start, and another machine may change the row before the
   * update reaches it.
   */
  async changeIn(q: Sql, id: number, where: string, set: string, params: Record<string, unknown>, t: Transition) {
    if (t.from !== undefined) return this.transition(q, id, where, set, params, t.from, t);
    return q.tx(async (tx) => {
      const [row] = await this.run<{ status: Status }>(tx, `SELECT status FROM tasks WHERE id = @id::bigint FOR NO KEY UPDATE`, { id });
      return row ? this.transition(tx, id, where, set, params, row.status, t) : undefined;
    });
  }
}
