import type { Status, Task } from '../../domain/tasks/model.ts';
import { rowToTask, type TaskRow } from '../../domain/tasks/rows.ts';
import type { LibraryFilter } from '../port.ts';
import type { TaskTable } from './taskTable.ts';

// Read-only views: pages and counts of tasks, how long work took, and the library of saved results.

/** One page of a project's tasks, newest first, for a list that shows thousands. */
export async function page(table: TaskTable, projectId: number, offset: number, limit: number): Promise<{ total: number; tasks: Task[] }> {
  const [count] = await table.run<{ n: number }>(table.sql, `SELECT count(*) AS n FROM tasks WHERE project_id = @projectId::bigint`, { projectId });
  const rows = await table.run(table.sql, `SELECT * FROM tasks WHERE project_id = @projectId::bigint ORDER BY id DESC LIMIT @limit::bigint OFFSET @offset::bigint`, {
    projectId,
    limit,
    offset,
  });
  return { total: count!.n, tasks: rows.map(rowToTask) };
}

/**
 * How long this model's latest successful requests took, from the provider's acceptance to the result saved,
 * in milliseconds (newest first): what polls are timed by and estimates are made from.
 */
export async function recentDurations(table: TaskTable, provider: string, model: string, limit = 50): Promise<number[]> {
  const rows = await table.run<{ d: number }>(
    table.sql,
    `SELECT finished_at - submitted_at AS d FROM tasks
      WHERE provider = @provider::text AND model = @model::text AND status = 'SUCCEEDED' AND submitted_at IS NOT NULL AND finished_at >= submitted_at
      ORDER BY id DESC LIMIT @limit::bigint`,
    { provider, model, limit },
  );
  return rows.map((r) => r.d);
}

/**
 * The seconds a provider billed this model's latest runs by (Replicate's predict_time of a prediction billed by
 * time), newest first, failed runs it billed included: what a model billed by time is estimated from.
 */
export async function recentBilledSeconds(table: TaskTable, provider: string, model: string, limit = 50): Promise<number[]> {
  const rows = await table.run<{ s: number }>(
    table.sql,
    `SELECT billed_units AS s FROM tasks WHERE provider = @provider::text AND model = @model::text AND billed_unit = 'second' ORDER BY id DESC LIMIT @limit::bigint`,
    { provider, model, limit },
  );
  return rows.map((r) => r.s);
}

/**
 * How long the latest successful renders took, from their claim to the file saved (newest first): a render is
 * made by the studio, so it has no provider's acceptance to count from.
 */
export async function recentRenderDurations(table: TaskTable, provider: string, model: string, limit = 50): Promise<number[]> {
  const rows = await table.run<{ d: number }>(
    table.sql,
    `SELECT d FROM (SELECT t.finished_at - (SELECT max(e.at) FROM task_events e
                                            WHERE e.task_id = t.id AND e.to_status = 'RUNNING' AND e.from_status = 'PENDING') AS d
                      FROM tasks t WHERE t.provider = @provider::text AND t.model = @model::text AND t.status = 'SUCCEEDED'
                     ORDER BY t.id DESC LIMIT @limit::bigint) latest
      WHERE d >= 0`,
    { provider, model, limit },
  );
  return rows.map((r) => r.d);
}

/** When each of these running tasks was last claimed: where a render's time is counted from. */
export async function claimedAt(table: TaskTable, ids: readonly number[]): Promise<Map<number, number>> {
  if (ids.length === 0) return new Map();
  const rows = await table.run<{ id: number; at: number }>(
    table.sql,
    `SELECT e.task_id AS id, max(e.at) AS at FROM task_events e
      WHERE e.task_id = ANY(@ids::bigint[]) AND e.to_status = 'RUNNING' AND e.from_status = 'PENDING' GROUP BY e.task_id`,
    { ids },
  );
  return new Map(rows.map((r) => [r.id, r.at]));
}

/** Tasks per status, per project. */
export async function counts(table: TaskTable): Promise<{ projectId: number; status: Status; n: number }[]> {
  return table.run(table.sql, `SELECT project_id AS "projectId", status, count(*) AS n FROM tasks GROUP BY project_id, status`);
}

// ---- The library: every result the studio saved, across projects ---------------------------

/**
 * One page of saved results (finished tasks with at least one file), newest first, with the project's name.
 * A result whose files the person deleted stays listed (it was paid for); its output_path is cleared.
 */
export async function library(table: TaskTable, filter: LibraryFilter, offset: number, limit: number): Promise<{ total: number; items: { task: Task; project: string; files: number }[] }> {
  const where = `t.status = 'SUCCEEDED' AND EXISTS (SELECT 1 FROM task_outputs o WHERE o.task_id = t.id)
     AND (@projectId::bigint IS NULL OR t.project_id = @projectId::bigint) AND (@kind::text IS NULL OR t.kind = @kind::text)
     AND (@provider::text IS NULL OR t.provider = @provider::text)
     AND (@from::bigint IS NULL OR t.finished_at >= @from::bigint) AND (@to::bigint IS NULL OR t.finished_at < @to::bigint)
     AND (@raw::text IS NULL OR strpos(lower(t.input_json), lower(@raw::text)) > 0)
     AND (@search::text IS NULL OR strpos(lower(coalesce(t.input_json::json ->> 'prompt', '') || ' ' || coalesce(t.input_json::json ->> 'text', '')),
                                          lower(@search::text)) > 0)`;
  const params = {
    projectId: filter.projectId ?? null,
    kind: filter.kind ?? null,
    provider: filter.provider ?? null,
    from: filter.from ?? null,
    to: filter.to ?? null,
    search: filter.search ? filter.search : null,
    // Words with no character JSON escapes appear as they are in the stored input: a plain match on its text
    // first spares parsing the JSON of every row that cannot match.
    raw: filter.search && !/["\\\u0000-\u001f]/.test(filter.search) ? filter.search : null,
  };
  const [count] = await table.run<{ n: number }>(table.sql, `SELECT count(*) AS n FROM tasks t WHERE ${where}`, params);
  const rows = await table.run<TaskRow & { project_name: string; file_count: number }>(
    table.sql,
    `SELECT t.*, p.name AS project_name, (SELECT count(*) FROM task_outputs o WHERE o.task_id = t.id) AS file_count
       FROM tasks t JOIN projects p ON p.id = t.project_id WHERE ${where}
      ORDER BY t.finished_at DESC, t.id DESC LIMIT @limit::bigint OFFSET @offset::bigint`,
    { ...params, limit, offset },
  );
  return { total: count!.n, items: rows.map((r) => ({ task: rowToTask(r), project: r.project_name, files: r.file_count })) };
}

/** The providers that have saved results, for the library's filter. */
export async function libraryProviders(table: TaskTable): Promise<string[]> {
  // One step per provider along the index by provider (tasks_durations), not a pass over every result.
  const rows = await table.run<{ provider: string }>(
    table.sql,
    `WITH RECURSIVE p(provider) AS (
       SELECT min(provider) FROM tasks WHERE status = 'SUCCEEDED'
       UNION ALL
       SELECT (SELECT min(provider) FROM tasks WHERE status = 'SUCCEEDED' AND provider > p.provider) FROM p WHERE p.provider IS NOT NULL)
     SELECT provider FROM p WHERE provider IS NOT NULL`,
  );
  return rows.map((r) => r.provider);
}

/**
 * The scene each task was made for, read from the renders that used it: a render names each scene's clip and
 * narration, and a clip names the image it was made from. The newest render wins; null when none used it.
 */
export async function scenesOf(table: TaskTable, ids: readonly number[]): Promise<Map<number, string | null>> {
  if (ids.length === 0) return new Map();
  // Found through the dependency rows a Generate writes (a render depends on each clip and narration, a clip on
  // its image), so only the renders that used these tasks are read, however many renders the studio made.
  const rows = await table.run<{ id: number; scene: string | null }>(
    table.sql,
    `WITH wanted(id, n) AS (SELECT * FROM unnest(@ids::bigint[]) WITH ORDINALITY),
          part(wanted, id) AS (
            SELECT id, id FROM wanted
            UNION ALL
            SELECT w.id, c.id FROM wanted w JOIN task_dependencies d ON d.depends_on = w.id JOIN tasks c ON c.id = d.task_id
             WHERE c.kind = 'clip'),
          uses(wanted, render, scene) AS MATERIALIZED (
            SELECT p.wanted, r.id, s.value ->> 'id'
              FROM part p JOIN task_dependencies d ON d.depends_on = p.id JOIN tasks r ON r.id = d.task_id
                   CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(r.input_json::jsonb -> 'scenes') = 'array'
                                                                THEN r.input_json::jsonb -> 'scenes' ELSE '[]'::jsonb END) s(value)
             WHERE r.kind = 'render'
               AND (s.value -> 'clip' -> '$output' = to_jsonb(p.id) OR s.value -> 'narration' -> '$output' = to_jsonb(p.id)))
     SELECT w.id AS id, (SELECT u.scene FROM uses u WHERE u.wanted = w.id ORDER BY u.render DESC LIMIT 1) AS scene
       FROM wanted w ORDER BY w.n`,
    { ids },
  );
  return new Map(rows.map((r) => [r.id, r.scene]));
}
