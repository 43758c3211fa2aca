import type { Status, Task } from '../../domain/tasks/model.ts';
import { rowToTask, type TaskRow } from '../../domain/tasks/rows.ts';
import type { LibraryFilter } from '../port.ts';
import { TaskTable } from './taskTable.ts';

/** What the app and the engine read across many tasks: pages, counts, durations, and the library of saved results. */
export class TaskViews extends TaskTable {
  /** One page of a project's tasks, newest first, for a list that shows thousands. */
  async page(projectId: number, offset: number, limit: number): Promise<{ total: number; tasks: Task[] }> {
    const total = this.stmt(`SELECT count(*) FROM tasks WHERE project_id = ?`).pluck().get(projectId) as number;
    const rows = this.stmt(`SELECT * FROM tasks WHERE project_id = ? ORDER BY id DESC LIMIT ? OFFSET ?`).all(projectId, limit, offset) as TaskRow[];
    return { total, tasks: rows.map(rowToTask) };
  }

  /**
   * How long this model's latest successful requests took on this machine, from the provider's acceptance to
   * the result saved, in milliseconds (newest first): what polls are timed by and estimates are made from.
   */
  async recentDurations(provider: string, model: string, limit = 50): Promise<number[]> {
    return this.stmt(
      `SELECT finished_at - submitted_at FROM tasks
        WHERE provider = ? AND model = ? AND status = 'SUCCEEDED' AND submitted_at IS NOT NULL AND finished_at >= submitted_at
        ORDER BY id DESC LIMIT ?`,
    )
      .pluck()
      .all(provider, model, limit) as number[];
  }

  /**
   * The seconds a provider billed this model's latest runs by (Replicate's predict_time of a prediction billed by
   * time), newest first, failed runs it billed included: what a model billed by time is estimated from.
   */
  async recentBilledSeconds(provider: string, model: string, limit = 50): Promise<number[]> {
    return this.stmt(`SELECT billed_units FROM tasks WHERE provider = ? AND model = ? AND billed_unit = 'second' ORDER BY id DESC LIMIT ?`)
      .pluck()
      .all(provider, model, limit) as number[];
  }

  /**
   * How long the latest successful renders took on this machine, from their claim to the file saved (newest
   * first): a render is made here, so it has no provider's acceptance to count from.
   */
  async recentRenderDurations(provider: string, model: string, limit = 50): Promise<number[]> {
    return this.stmt(
      `SELECT d FROM (SELECT t.finished_at - (SELECT max(e.at) FROM task_events e
                                              WHERE e.task_id = t.id AND e.to_status = 'RUNNING' AND e.from_status = 'PENDING') AS d
                        FROM tasks t WHERE t.provider = ? AND t.model = ? AND t.status = 'SUCCEEDED' ORDER BY t.id DESC LIMIT ?)
        WHERE d >= 0`,
    )
      .pluck()
      .all(provider, model, limit) as number[];
  }

  /** When each of these running tasks was last claimed: where a render's time is counted from. */
  async claimedAt(ids: readonly number[]): Promise<Map<number, number>> {
    if (ids.length === 0) return new Map();
    const rows = this.stmt(
      `SELECT e.task_id AS id, max(e.at) AS at FROM json_each(@ids) w CROSS JOIN task_events e
        WHERE e.task_id = w.value AND e.to_status = 'RUNNING' AND e.from_status = 'PENDING' GROUP BY e.task_id`,
    ).all({ ids: JSON.stringify(ids) }) as { id: number; at: number }[];
    return new Map(rows.map((r) => [r.id, r.at]));
  }

  /** Tasks per status, per project. */
  async counts(): Promise<{ projectId: number; status: Status; n: number }[]> {
    return this.stmt(`SELECT project_id AS projectId, status, count(*) AS n FROM tasks GROUP BY project_id, status`).all() as never;
  }

  // ---- The library: every result the studio saved, across projects ---------------------------

  /**
   * One page of saved results (finished tasks with at least one file), newest first, with the project's name.
   * A result whose files the person deleted stays listed (it was paid for); its output_path is cleared.
   */
  async library(filter: LibraryFilter, offset: number, limit: number): Promise<{ total: number; items: { task: Task; project: string; files: number }[] }> {
    const where = `t.status = 'SUCCEEDED' AND EXISTS (SELECT 1 FROM task_outputs o WHERE o.task_id = t.id)
       AND (@projectId IS NULL OR t.project_id = @projectId) AND (@kind IS NULL OR t.kind = @kind)
       AND (@provider IS NULL OR t.provider = @provider)
       AND (@from IS NULL OR t.finished_at >= @from) AND (@to IS NULL OR t.finished_at < @to)
       AND (@raw IS NULL OR instr(lower(t.input_json), lower(@raw)) > 0)
       AND (@search IS NULL OR instr(lower(coalesce(json_extract(t.input_json, '$.prompt'), '') || ' ' || coalesce(json_extract(t.input_json, '$.text'), '')), lower(@search)) > 0)`;
    const params = {
      projectId: filter.projectId ?? null,
      kind: filter.kind ?? null,
      provider: filter.provider ?? null,
      from: filter.from ?? null,
      to: filter.to ?? null,
      search: filter.search ? filter.search : null,
      // Words with no character JSON escapes appear as they are in the stored input: a plain match on its text
      // first spares parsing the JSON of every row that cannot match (most of them, at 100,000 results).
      raw: filter.search && !/["\\\u0000-\u001f]/.test(filter.search) ? filter.search : null,
    };
    return this.tx(() => {
      const total = this.stmt(`SELECT count(*) FROM tasks t WHERE ${where}`).pluck().get(params) as number;
      const rows = this.stmt(
        `SELECT t.*, p.name AS project_name, (SELECT count(*) FROM task_outputs o WHERE o.task_id = t.id) AS file_count
           FROM tasks t JOIN projects p ON p.id = t.project_id WHERE ${where}
          ORDER BY t.finished_at DESC, t.id DESC LIMIT @limit OFFSET @offset`,
      ).all({ ...params, limit, offset }) as (TaskRow & { project_name: string; file_count: number })[];
      return { total, items: rows.map((r) => ({ task: rowToTask(r), project: r.project_name, files: r.file_count })) };
    });
  }

  /** The providers that have saved results, for the library's filter. */
  async libraryProviders(): Promise<string[]> {
    // One step per provider along the index by provider (tasks_durations), not a pass over every result.
    return this.stmt(
      `WITH RECURSIVE p(provider) AS (
         SELECT min(provider) FROM tasks WHERE status = 'SUCCEEDED'
         UNION ALL
         SELECT (SELECT min(provider) FROM tasks WHERE status = 'SUCCEEDED' AND provider > p.provider) FROM p WHERE p.provider IS NOT NULL)
       SELECT provider FROM p WHERE provider IS NOT NULL`,
    )
      .pluck()
      .all() as string[];
  }

  /**
   * The scene each task was made for, read from the renders that used it: a render names each scene's clip and
   * narration, and a clip names the image it was made from. The newest render wins; null when none used it.
   */
  async scenesOf(ids: readonly number[]): Promise<Map<number, string | null>> {
    if (ids.length === 0) return new Map();
    // Found through the dependency rows a Generate writes (a render depends on each clip and narration, a clip on
    // its image), so only the renders that used these tasks are read, however many renders the studio made.
    // CROSS JOIN keeps that order: left to itself the planner reads every render first.
    const rows = this.stmt(
      `WITH wanted(id) AS (SELECT value FROM json_each(@ids)),
            part(wanted, id) AS (
              SELECT id, id FROM wanted
              UNION ALL
              SELECT w.id, c.id FROM wanted w CROSS JOIN task_dependencies d CROSS JOIN tasks c
               WHERE d.depends_on = w.id AND c.id = d.task_id AND c.kind = 'clip'),
            uses(wanted, render, scene) AS MATERIALIZED (
              SELECT p.wanted, r.id, json_extract(s.value, '$.id')
                FROM part p CROSS JOIN task_dependencies d CROSS JOIN tasks r CROSS JOIN json_each(r.input_json, '$.scenes') s
               WHERE d.depends_on = p.id AND r.id = d.task_id AND r.kind = 'render'
                 AND (json_extract(s.value, '$.clip."$output"') = p.id OR json_extract(s.value, '$.narration."$output"') = p.id))
       SELECT w.id AS id, (SELECT u.scene FROM uses u WHERE u.wanted = w.id ORDER BY u.render DESC LIMIT 1) AS scene
         FROM wanted w`,
    ).all({ ids: JSON.stringify(ids) }) as { id: number; scene: string | null }[];
    return new Map(rows.map((r) => [r.id, r.scene]));
  }
}
