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

export class ProjectRepository {
  constructor(private readonly db: Db) {}

  byName(name: string): Project | undefined {
    const row = this.db.prepare(`SELECT * FROM projects WHERE name = ?`).get(name) as ProjectRow | undefined;
    return row && toProject(row);
  }

  /** Projects are named by people; the first task in a new name creates it. */
  ensure(name: string, now: number): Project {
    const trimmed = name.trim();
    if (!trimmed) throw new Error('A project needs a name.');
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
