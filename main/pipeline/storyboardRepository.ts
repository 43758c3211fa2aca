import type { Db } from '../db/database.ts';
import { parseStoryboard, type Storyboard } from './storyboard.ts';

export class StoryboardRepository {
  constructor(private readonly db: Db) {}

  /** The storyboard, checked as it is read: a StoryboardError names what no longer passes. */
  get(projectId: number): Storyboard | undefined {
    const raw = this.raw(projectId);
    return raw === undefined ? undefined : parseStoryboard(raw);
  }

  /** The stored JSON as it is, even when it no longer passes the checks, so it can always be shown and replaced. */
  raw(projectId: number): unknown {
    const row = this.db.prepare(`SELECT json FROM storyboards WHERE project_id = ?`).get(projectId) as { json: string } | undefined;
    return row && JSON.parse(row.json);
  }

  /** Saves a storyboard already checked by parseStoryboard, so what is stored always reads back. */
  save(projectId: number, board: Storyboard, now: number): void {
    this.db
      .prepare(
        `INSERT INTO storyboards (project_id, json, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (project_id) DO UPDATE SET json = excluded.json, updated_at = excluded.updated_at`,
      )
      .run(projectId, JSON.stringify(board), now);
  }
}
