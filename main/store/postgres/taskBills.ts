import type { Task } from '../../domain/tasks/model.ts';
import { rowToTask } from '../../domain/tasks/rows.ts';
import type { TaskTable } from './taskTable.ts';

// Bills read after the fact from a provider's usage records (main/engine/falBills.ts): what may be in them, and what they showed.

/** A provider's requests sent since `since` (ms), every project's: any of them may share a usage record with another. */
export async function sentSince(table: TaskTable, provider: string, since: number): Promise<Task[]> {
  const rows = await table.run(
    table.sql,
    `SELECT * FROM tasks WHERE provider = @provider::text AND submit_started_at IS NOT NULL AND submit_started_at >= @since::bigint ORDER BY id`,
    { provider, since },
  );
  return rows.map(rowToTask);
}

/** The billed figure of a task with none yet (money, as the usage records report it): a figure the provider already reported is never replaced. */
export async function recordBill(table: TaskTable, id: number, amount: number, source: string): Promise<boolean> {
  const rows = await table.run<{ id: number }>(
    table.sql,
    `UPDATE tasks SET cost_actual = @amount::bigint, cost_actual_source = @source::text, billed_unit = 'money', billed_units = NULL WHERE id = @id::bigint AND cost_actual IS NULL RETURNING id`,
    { id, amount, source },
  );
  return rows.length === 1;
}

/** Why a task with no billed figure still shows its estimate, in its billing source (the figure stays NULL). */
export async function noteNoBill(table: TaskTable, id: number, why: string): Promise<boolean> {
  const rows = await table.run<{ id: number }>(
    table.sql,
    `UPDATE tasks SET cost_actual_source = @why::text WHERE id = @id::bigint AND cost_actual IS NULL RETURNING id`,
    { id, why },
  );
  return rows.length === 1;
}
