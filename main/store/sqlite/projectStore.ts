import type { Db } from '../../db/database.ts';
import { checkProjectName, projectFromRow, type Project, type ProjectRow } from '../../domain/project.ts';
import type { ProjectStore } from '../port.ts';
import { moveOf, refuseIfMoved } from './projectMoves.ts';

export class SqliteProjectStore implements ProjectStore {
  constructor(private readonly db: Db) {}

  /** The project, with its move to a team database if it has one. */
  private project(row: ProjectRow): Project {
    const moved = moveOf(this.db, row.id);
    return moved ? { ...projectFromRow(row), moved } : projectFromRow(row);
  }

  async byName(name: string): Promise<Project | undefined> {
    return this.read(name);
  }

  private read(name: string): Project | undefined {
    const row = this.db.prepare(`SELECT * FROM projects WHERE name = ?`).get(name) as ProjectRow | undefined;
    return row && this.project(row);
  }

  /** Projects are named by people; the first task in a new name creates it. */
  async ensure(name: string, now: number): Promise<Project> {
    const trimmed = checkProjectName(name);
    this.db.prepare(`INSERT INTO projects (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`).run(trimmed, now);
    return this.read(trimmed)!;
  }

  /** A transaction here is BEGIN IMMEDIATE, which already holds the whole database until it ends: only the read is left. */
  async lock(id: number): Promise<Project | undefined> {
    const row = this.db.prepare(`SELECT * FROM projects WHERE id = ?`).get(id) as ProjectRow | undefined;
    return row && this.project(row);
  }

  /** Sets or clears (null) a project's budget, in micro-units. */
  async setBudget(id: number, budget: number | null): Promise<void> {
    refuseIfMoved(this.db, id);
    this.db.prepare(`UPDATE projects SET budget = ? WHERE id = ?`).run(budget, id);
  }

  async list(): Promise<Project[]> {
    return (this.db.prepare(`SELECT * FROM projects ORDER BY id`).all() as ProjectRow[]).map((r) => this.project(r));
  }
}
