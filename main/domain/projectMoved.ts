import { ProjectRefused, type ProjectMove } from './project.ts';

/** A change to a project that moved to a team database (or is moving): made there, never here, so nothing is paid twice. */
export class ProjectMoved extends ProjectRefused {}

/** "2025-03-04 10:22 UTC" */
export function when(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** Why a moved (or moving) project takes no more work here, and where it is now. */
export function movedWords(move: ProjectMove): string {
  if (move.movedAt !== null) return `this project moved to the team database ${move.team} on ${when(move.movedAt)}; work on it there (--db or STUDIO_DATABASE_URL)`;
  return `this project is being moved to the team database ${move.team} (since ${when(move.startedAt)}); run "studio team push" for it again to finish the move`;
}
