import { checkProjectName, projectFromRow, type Project, type ProjectRow } from '../../domain/project.ts';
import type { ProjectStore } from '../port.ts';
import type { Sql } from './sql.ts';

const COLUMNS = `id, name, budget, currency, created_at`;

export class PostgresProjectStore implements ProjectStore {
  constructor(private readonly sql: Sql) {}

  async byName(name: string): Promise<Project | undefined> {
    const [row] = await this.sql.query<ProjectRow>(`SELECT ${COLUMNS} FROM projects WHERE name = $1`, [name]);
    return row && projectFromRow(row);
  }

  /**
   * Projects are named by people; the first task in a new name creates it. The read is a statement of its own:
   * when another machine created the name at the same moment, the insert waits for it and does nothing, and
   * only a later statement sees its row.
   */
  async ensure(name: string, now: number): Promise<Project> {
    const trimmed = checkProjectName(name);
    await this.sql.query(`INSERT INTO projects (name, created_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, [trimmed, now]);
    return (await this.byName(trimmed))!;
  }

  /**
   * Inside a transaction: holds the project's row until it ends, so two Generates of one project, on any
   * machine, judge and enqueue one after the other, and a budget set meanwhile waits too. NO KEY UPDATE, not
   * UPDATE: other machines can still add tasks to the project (their foreign key check only shares the key).
   */
  async lock(id: number): Promise<Project | undefined> {
    const [row] = await this.sql.query<ProjectRow>(`SELECT ${COLUMNS} FROM projects WHERE id = $1 FOR NO KEY UPDATE`, [id]);
    return row && projectFromRow(row);
  }

  /** Sets or clears (null) a project's budget, in micro-units. */
  async setBudget(id: number, budget: number | null): Promise<void> {
    await this.sql.query(`UPDATE projects SET budget = $2 WHERE id = $1`, [id, budget]);
  }

  async list(): Promise<Project[]> {
    return (await this.sql.query<ProjectRow>(`SELECT ${COLUMNS} FROM projects ORDER BY id`)).map(projectFromRow);
  }
}
