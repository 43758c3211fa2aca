import type { Db } from '../db/database.ts';
import { parseStoryboard, type Storyboard } from './storyboard.ts';

export class StoryboardRepository {
  constructor(private readonly db: Db) {}

  get(projectId: number): Storyboard | undefined {
    const row = this.db.prepare(`SELECT json FROM storyboards WHERE project_id = ?`).get(projectId) as { json: string } | undefined;
    return row && parseStoryboard(JSON.parse(row.json));
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
