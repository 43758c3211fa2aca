import type { Db } from '../../db/database.ts';
import type { ProjectRows } from '../../domain/projectRows.ts';

/** A project as it is here, every row of it, read in one transaction so the rows agree with each other. */
export function projectRows(db: Db, projectId: number): ProjectRows {
  return db.transaction((): ProjectRows => {
    const all = <T>(sql: string) => db.prepare(sql).all(projectId) as T[];
    return {
      project: db.prepare(`SELECT id, name, budget, currency, created_at FROM projects WHERE id = ?`).get(projectId) as ProjectRows['project'],
      storyboard: (db.prepare(`SELECT json, updated_at FROM storyboards WHERE project_id = ?`).get(projectId) as ProjectRows['storyboard'] | undefined) ?? null,
      tasks: all(`SELECT * FROM tasks WHERE project_id = ? ORDER BY id`),
      dependencies: all(`SELECT d.task_id, d.depends_on FROM task_dependencies d JOIN tasks t ON t.id = d.task_id WHERE t.project_id = ? ORDER BY d.task_id, d.depends_on`),
      events: all(`SELECT e.* FROM task_events e JOIN tasks t ON t.id = e.task_id WHERE t.project_id = ? ORDER BY e.id`),
      outputs: all(`SELECT o.task_id, o.idx, o.path, o.sha256, o.bytes, o.content_type, o.machine FROM task_outputs o JOIN tasks t ON t.id = o.task_id
                     WHERE t.project_id = ? ORDER BY o.task_id, o.idx`),
      takes: all(`SELECT * FROM takes WHERE project_id = ? ORDER BY scene, take`),
      picks: all(`SELECT * FROM take_picks WHERE project_id = ? ORDER BY scene`),
    };
  }).deferred();
}

/** The project's id and its tasks' states, for judging whether it can move now. */
export function projectNamed(db: Db, name: string): { id: number; name: string } | undefined {
  return db.prepare(`SELECT id, name FROM projects WHERE name = ?`).get(name) as { id: number; name: string } | undefined;
}

export function taskStates(db: Db, projectId: number): { id: number; kind: string; status: string }[] {
  return db.prepare(`SELECT id, kind, status FROM tasks WHERE project_id = ? ORDER BY id`).all(projectId) as { id: number; kind: string; status: string }[];
}
