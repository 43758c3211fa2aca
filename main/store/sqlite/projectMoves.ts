import type { Db } from '../../db/database.ts';
import type { ProjectMove } from '../../domain/project.ts';
import { movedWords, ProjectMoved } from '../../domain/projectMoved.ts';

interface MoveRow {
  project_id: number;
  push_id: string;
  team: string;
  started_at: number;
  moved_at: number | null;
  team_project_id: number | null;
}

const toMove = (r: MoveRow): ProjectMove => ({
  projectId: r.project_id,
  pushId: r.push_id,
  team: r.team,
  startedAt: r.started_at,
  movedAt: r.moved_at,
  teamProjectId: r.team_project_id,
});

/** The project's move to a team database, under way or done, if it has one. */
export function moveOf(db: Db, projectId: number): ProjectMove | undefined {
  const row = db.prepare(`SELECT * FROM project_moves WHERE project_id = ?`).get(projectId) as MoveRow | undefined;
  return row && toMove(row);
}

/** Refuses any change to a project that moved, or is moving, to a team database. */
export function refuseIfMoved(db: Db, projectId: number): void {
  const move = moveOf(db, projectId);
  if (move) throw new ProjectMoved(movedWords(move));
}

/** Refuses a person's change to a task of a project that moved, or is moving. */
export function refuseIfTaskMoved(db: Db, taskId: number): void {
  const row = db.prepare(`SELECT project_id FROM tasks WHERE id = ?`).get(taskId) as { project_id: number } | undefined;
  if (row) refuseIfMoved(db, row.project_id);
}

/** From now on the project takes no work here; a move already begun is kept as it is. Returns the move. */
export function beginMove(db: Db, move: Pick<ProjectMove, 'projectId' | 'pushId' | 'team' | 'startedAt'>): ProjectMove {
  db.prepare(
    `INSERT INTO project_moves (project_id, push_id, team, started_at) VALUES (@projectId, @pushId, @team, @startedAt)
     ON CONFLICT (project_id) DO NOTHING`,
  ).run(move);
  return moveOf(db, move.projectId)!;
}

/** The team database has the project: the move is done. */
export function finishMove(db: Db, projectId: number, teamProjectId: number, now: number): void {
  db.prepare(`UPDATE project_moves SET moved_at = coalesce(moved_at, @now), team_project_id = @teamProjectId WHERE project_id = @projectId`).run({ projectId, teamProjectId, now });
}

/** A move the team database refused, with nothing of it committed there: the project is this database's again. */
export function dropMove(db: Db, projectId: number, pushId: string): void {
  db.prepare(`DELETE FROM project_moves WHERE project_id = ? AND push_id = ? AND moved_at IS NULL`).run(projectId, pushId);
}
