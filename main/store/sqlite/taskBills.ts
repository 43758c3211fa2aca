import type { Task } from '../../domain/tasks/model.ts';
import { rowToTask, type TaskRow } from '../../domain/tasks/rows.ts';
import { TaskTable } from './taskTable.ts';

/** Bills read after the fact from a provider's usage records (main/engine/falBills.ts): what may be in them, and what they showed. */
export class TaskBills extends TaskTable {
  /** A provider's requests sent since `since` (ms), every project's: any of them may share a usage record with another. */
  async sentSince(provider: string, since: number): Promise<Task[]> {
    const rows = this.stmt(`SELECT * FROM tasks WHERE provider = ? AND submit_started_at IS NOT NULL AND submit_started_at >= ? ORDER BY id`).all(provider, since) as TaskRow[];
    return rows.map(rowToTask);
  }

  /** The billed figure of a task with none yet (money, as the usage records report it): a figure the provider already reported is never replaced. */
  async recordBill(id: number, amount: number, source: string): Promise<boolean> {
    return this.stmt(`UPDATE tasks SET cost_actual = ?, cost_actual_source = ?, billed_unit = 'money', billed_units = NULL WHERE id = ? AND cost_actual IS NULL`).run(amount, source, id).changes === 1;
  }

  /** Why a task with no billed figure still shows its estimate, in its billing source (the figure stays NULL). */
  async noteNoBill(id: number, why: string): Promise<boolean> {
    return this.stmt(`UPDATE tasks SET cost_actual_source = ? WHERE id = ? AND cost_actual IS NULL`).run(why, id).changes === 1;
  }
}
