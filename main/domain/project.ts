/** A project's move to a team database, as the database it left keeps it. */
export interface ProjectMove {
  projectId: number;
  /** Names this move in the team database, so a push run again finds what it already copied. */
  pushId: string;
  /** The team database's address, without its password. */
  team: string;
  startedAt: number;
  /** When the team database had the project; null while the move is under way or was cut short. */
  movedAt: number | null;
  teamProjectId: number | null;
}

export interface Project {
  id: number;
  name: string;
  budget: number | null;
  currency: string;
  createdAt: number;
  /** Its move to a team database, under way or done, in a database it left: then it takes no more work there. */
  moved?: ProjectMove;
}

/** A project as both stores keep it: one row of `projects`. */
export interface ProjectRow {
  id: number;
  name: string;
  budget: number | null;
  currency: string;
  created_at: number;
}

export const projectFromRow = (r: ProjectRow): Project => ({
  id: r.id,
  name: r.name,
  budget: r.budget,
  currency: r.currency,
  createdAt: r.created_at,
});

/** A project name or budget that cannot be stored, with what to fix. */
export class ProjectRefused extends Error {}

export const MAX_PROJECT_NAME = 100;

/** The largest budget a project takes, in its currency: a typo such as 1e308 is refused, not stored. */
export const MAX_BUDGET = 1_000_000;

/** A name a person can read back: trimmed, not empty, not too long, no control characters. */
export function checkProjectName(name: unknown): string {
  if (typeof name !== 'string' || !name.trim()) throw new ProjectRefused('a project needs a name');
  const trimmed = name.trim();
  if (trimmed.length > MAX_PROJECT_NAME) throw new ProjectRefused(`a project name has at most ${MAX_PROJECT_NAME} characters`);
  // Controls, line breaks and direction overrides: no one means to type them into a name, and they garble
  // (or disguise) every list it is shown in.
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/.test(trimmed)) {
    throw new ProjectRefused('a project name cannot hold control characters (tabs, line breaks, direction marks)');
  }
  return trimmed;
}
