import { readStoryboard, type Storyboard } from '../../domain/storyboard.ts';
import type { StoryboardStore } from '../port.ts';
import type { Sql } from './sql.ts';

export class PostgresStoryboardStore implements StoryboardStore {
  constructor(private readonly sql: Sql) {}

  /** The storyboard, checked as it is read (its models by the studio, see checkedStoryboards): a StoryboardError names what no longer passes. */
  async get(projectId: number): Promise<Storyboard | undefined> {
    const raw = await this.raw(projectId);
    return raw === undefined ? undefined : readStoryboard(raw);
  }

  /** The stored JSON as it is, even when it no longer passes the checks, so it can always be shown and replaced. */
  async raw(projectId: number): Promise<unknown> {
    const [row] = await this.sql.query<{ json: string }>(`SELECT json FROM storyboards WHERE project_id = $1`, [projectId]);
    return row && JSON.parse(row.json);
  }

  /** Saves a storyboard already checked by parseStoryboard, so what is stored always reads back. */
  async save(projectId: number, board: Storyboard, now: number): Promise<void> {
    await this.sql.query(
      `INSERT INTO storyboards (project_id, json, updated_at) VALUES ($1, $2, $3)
       ON CONFLICT (project_id) DO UPDATE SET json = excluded.json, updated_at = excluded.updated_at`,
      [projectId, JSON.stringify(board), now],
    );
  }
}
