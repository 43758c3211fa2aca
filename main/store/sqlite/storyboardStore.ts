import type { Db } from '../../db/database.ts';
import { readStoryboard, type Storyboard } from '../../domain/storyboard.ts';
import { StaleStoryboard } from '../../domain/storyboardRevision.ts';
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

  async revision(projectId: number): Promise<number> {
    const row = this.db.prepare(`SELECT revision FROM storyboards WHERE project_id = ?`).get(projectId) as { revision: number } | undefined;
    return row?.revision ?? 0;
  }

  /** Saves a storyboard already checked by parseStoryboard, so what is stored always reads back; see StoryboardStore.save. */
  async save(projectId: number, board: Storyboard, now: number, from?: number): Promise<number> {
    refuseIfMoved(this.db, projectId);
    const json = JSON.stringify(board);
    // One statement each, so the check of the revision and the write are one step for every connection.
    const row =
      from === undefined
        ? this.db
            .prepare(
              `INSERT INTO storyboards (project_id, json, updated_at) VALUES (?, ?, ?)
               ON CONFLICT (project_id) DO UPDATE SET json = excluded.json, updated_at = excluded.updated_at, revision = storyboards.revision + 1
               RETURNING revision`,
            )
            .get(projectId, json, now)
        : from === 0
          ? this.db.prepare(`INSERT INTO storyboards (project_id, json, updated_at) VALUES (?, ?, ?) ON CONFLICT (project_id) DO NOTHING RETURNING revision`).get(projectId, json, now)
          : this.db
              .prepare(`UPDATE storyboards SET json = ?, updated_at = ?, revision = revision + 1 WHERE project_id = ? AND revision = ? RETURNING revision`)
              .get(json, now, projectId, from);
    if (!row) throw new StaleStoryboard(projectId, from!, await this.revision(projectId));
    return (row as { revision: number }).revision;
  }
}
