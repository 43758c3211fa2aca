import type { Db } from '../../db/database.ts';
import { readStoryboard, type Storyboard } from '../../domain/storyboard.ts';
import type { StoryboardStore } from '../port.ts';
import { refuseIfMoved } from './projectMoves.ts';

export class SqliteStoryboardStore implements StoryboardStore {
  constructor(private readonly db: Db) {}

  /** The storyboard, checked as it is read (its models by the studio, see checkedStoryboards): a StoryboardError names what no longer passes. */
  async get(projectId: number): Promise<Storyboard | undefined> {
    const raw = this.read(projectId);
    return raw === undefined ? undefined : readStoryboard(raw);
  }

  /** The stored JSON as it is, even when it no longer passes the checks, so it can always be shown and replaced. */
  async raw(projectId: number): Promise<unknown> {
    return this.read(projectId);
  }

  private read(projectId: number): unknown {
    const row = this.db.prepare(`SELECT json FROM storyboards WHERE project_id = ?`).get(projectId) as { json: string } | undefined;
    return row && JSON.parse(row.json);
  }

  /** Saves a storyboard already checked by parseStoryboard, so what is stored always reads back. */
  async save(projectId: number, board: Storyboard, now: number): Promise<void> {
    refuseIfMoved(this.db, projectId);
    this.db
      .prepare(
        `INSERT INTO storyboards (project_id, json, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (project_id) DO UPDATE SET json = excluded.json, updated_at = excluded.updated_at`,
      )
      .run(projectId, JSON.stringify(board), now);
  }
}
