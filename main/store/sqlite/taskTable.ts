import type { Statement } from 'better-sqlite3';
import type { Db } from '../../db/database.ts';
import { immediateTransactions } from '../../db/transaction.ts';
import type { Actor, Status, Task } from '../../domain/tasks/model.ts';
import { didNotSucceed, type DependentWords } from '../../domain/tasks/dependentWords.ts';
import { rowToTask, type TaskRow } from '../../domain/tasks/rows.ts';
import type { Lease } from '../port.ts';

export interface Transition {
  /** The status the write's condition already pins, which spares reading it first. */
  from?: Status;
  actor: Actor;
  reason: string;
  detail?: unknown;
  /** More writes that belong to the same transition, in its transaction. */
  then?: (task: Task) => void;
}

export const LEASED = `status IN ('RUNNING', 'SUBMITTED')`;

// Ownership is the fence: a takeover or a recovery changes lease_owner, and recovery writes are themselves
// conditioned on the exact lease they saw, so an owner that was only asleep may renew and carry on.
export const FENCE = `lease_owner = @owner`;

/** A write after the boundary mark also names the attempt it marked (see Lease.attempt). */
export const fence = (lease: Lease) => (lease.attempt === undefined ? FENCE : `${FENCE} AND idempotency_key = @attempt`);

/** What a person's resubmit says in the task's history; a late receipt reads it (see ABANDONED_AT_KEY). */
export const RESUBMITTED = 'resubmitted: the earlier attempt may also have been charged';

/** What the parts of one task store share (see TaskTable). */
export interface SharedTable {
  db: Db;
  /** Names this machine on the files it saves. */
  machine: string;
  /** Tells this machine from another of the same name on the files it saves (see config/machineId.ts); null where unknown. */
  machineId: string | null;
  statements: Map<string, Statement>;
  claimable: Set<() => void>;
  tx: <T>(fn: () => T) => T;
}

export function shareTable(db: Db, machine: string, machineId: string | null = null): SharedTable {
  return { db, machine, machineId, statements: new Map(), claimable: new Set(), tx: immediateTransactions(db) };
}

/**
 * The task table as each part of the SQLite task store sees it (see SqliteTaskStore): one connection, one cache of
 * prepared statements, one set of listeners, and the writes every part makes.
 */
export abstract class TaskTable {
  protected readonly db: Db;
  protected readonly machine: string;
  protected readonly machineId: string | null;
  protected readonly tx: <T>(fn: () => T) => T;
  private readonly statements: Map<string, Statement>;
  private readonly claimable: Set<() => void>;

  constructor(shared: SharedTable) {
    this.db = shared.db;
    this.machine = shared.machine;
    this.machineId = shared.machineId;
    this.tx = shared.tx;
    this.statements = shared.statements;
    this.claimable = shared.claimable;
  }

  protected stmt(sql: string): Statement {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  /**
   * Calls `listener` when a write of this process may have left work to claim or a slot free (a task enqueued,
   * or one let go of: finished, requeued, released). It is called inside the write's transaction, so it must
   * only schedule its work for later. Returns the unsubscribe.
   */
  onClaimable(listener: () => void): () => void {
    this.claimable.add(listener);
    return () => this.claimable.delete(listener);
  }

  protected wake(): void {
    for (const listener of this.claimable) listener();
  }

  protected event(taskId: number, at: number, from: Status | null, to: Status, t: Transition): void {
    this.stmt(
      `INSERT INTO task_events (task_id, at, from_status, to_status, actor, reason, detail_json)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ).run(taskId, at, from, to, t.actor, t.reason, t.detail === undefined ? null : JSON.stringify(t.detail));
  }

  /**
   * Updates one row if `where` still holds and logs the transition in the same transaction.
   * Returns the updated task, or undefined when the condition no longer holds (lease lost, state moved on).
   */
  protected change(id: number, where: string, set: string, params: Record<string, unknown>, t: Transition): Task | undefined {
    const now = params.now as number;
    return this.tx(() => {
      const from = t.from ?? (this.stmt(`SELECT status FROM tasks WHERE id = ?`).get(id) as { status: Status } | undefined)?.status;
      if (!from) return undefined;
      const row = this.stmt(
        `UPDATE tasks SET ${set}, updated_at = @now WHERE id = @id AND (${where}) RETURNING *`,
      ).get({ ...params, id }) as TaskRow | undefined;
      if (!row) return undefined;
      this.event(id, now, from, row.status, t);
      const task = rowToTask(row);
      t.then?.(task);
      if (row.lease_owner === null) this.wake();
      return task;
    });
  }

  /** Pending work that can never run because something it needs failed or was cancelled; `why` words the error. */
  protected cancelDependents(id: number, now: number, why: (id: number) => DependentWords = didNotSucceed): void {
    const dependents = this.stmt(
      `SELECT t.id FROM task_dependencies d JOIN tasks t ON t.id = d.task_id
        WHERE d.depends_on = ? AND t.status = 'PENDING'`,
    ).all(id) as { id: number }[];
    for (const { id: dep } of dependents) {
      const { error, reason } = why(id);
      const cancelled = this.change(
        dep,
        `status = 'PENDING'`,
        `status = 'CANCELLED', error = @error, finished_at = @now`,
        { now, error },
        { from: 'PENDING', actor: 'engine', reason, detail: { dependsOn: id } },
      );
      if (cancelled) this.cancelDependents(dep, now, why);
    }
  }
}
