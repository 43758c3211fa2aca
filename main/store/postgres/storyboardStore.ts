import { readStoryboard, type Storyboard } from '../../domain/storyboard.ts';
import { StaleStoryboard } from '../../domain/storyboardRevision.ts';
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

  async revision(projectId: number): Promise<number> {
    const [row] = await this.sql.query<{ revision: string }>(`SELECT revision FROM storyboards WHERE project_id = $1`, [projectId]);
    return row ? Number(row.revision) : 0;
  }

  /** Saves a storyboard already checked by parseStoryboard, so what is stored always reads back; see StoryboardStore.save. */
  async save(projectId: number, board: Storyboard, now: number, from?: number): Promise<number> {
    const json = JSON.stringify(board);
    // One statement each: the row's lock makes a second save made from the same revision find it changed.
    const [row] =
      from === undefined
        ? await this.sql.query<{ revision: string }>(
            `INSERT INTO storyboards (project_id, json, updated_at) VALUES ($1, $2, $3)
             ON CONFLICT (project_id) DO UPDATE SET json = excluded.json, updated_at = excluded.updated_at, revision = storyboards.revision + 1
             RETURNING revision`,
            [projectId, json, now],
          )
        : from === 0
          ? await this.sql.query<{ revision: string }>(
              `INSERT INTO storyboards (project_id, json, updated_at) VALUES ($1, $2, $3) ON CONFLICT (project_id) DO NOTHING RETURNING revision`,
              [projectId, json, now],
            )
          : await this.sql.query<{ revision: string }>(
              `UPDATE storyboards SET json = $1, updated_at = $2, revision = revision + 1 WHERE project_id = $3 AND revision = $4 RETURNING revision`,
              [json, now, projectId, from],
            );
    if (!row) throw new StaleStoryboard(projectId, from!, await this.revision(projectId));
    return Number(row.revision);
  }
}
