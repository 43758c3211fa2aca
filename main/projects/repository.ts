import type { Db } from '../db/database.ts';

export interface Project {
  id: number;
  name: string;
  budget: number | null;
  currency: string;
  createdAt: number;
}

interface ProjectRow {
  id: number;
  name: string;
  budget: number | null;
  currency: string;
  created_at: number;
}

const toProject = (r: ProjectRow): Project => ({
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

export class ProjectRepository {
  constructor(private readonly db: Db) {}

  byName(name: string): Project | undefined {
    const row = this.db.prepare(`SELECT * FROM projects WHERE name = ?`).get(name) as ProjectRow | undefined;
    return row && toProject(row);
  }

  /** Projects are named by people; the first task in a new name creates it. */
  ensure(name: string, now: number): Project {
    const trimmed = checkProjectName(name);
    this.db.prepare(`INSERT INTO projects (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`).run(trimmed, now);
    return this.byName(trimmed)!;
  }

  /** Sets or clears (null) a project's budget, in micro-units. */
  setBudget(id: number, budget: number | null): void {
    this.db.prepare(`UPDATE projects SET budget = ? WHERE id = ?`).run(budget, id);
  }

  list(): Project[] {
    return (this.db.prepare(`SELECT * FROM projects ORDER BY id`).all() as ProjectRow[]).map(toProject);
  }
}
