import { takeFromRow, type TakeRecord, type TakeRow } from '../../domain/takeRecord.ts';
import type { TakeStore } from '../port.ts';
import type { Sql } from './sql.ts';

/**
 * The takes of each scene and which one goes into the render. Rows are added, never replaced by a later take.
 * Scenes sort by their bytes (COLLATE "C"), as in the embedded store, whatever the database's locale.
 */
export class PostgresTakeStore implements TakeStore {
  constructor(private readonly sql: Sql) {}

  /** A project's takes (of one scene, or all), in scene and take order. */
  async list(projectId: number, scene?: string): Promise<TakeRecord[]> {
    const rows =
      scene === undefined
        ? await this.sql.query<TakeRow>(`SELECT * FROM takes WHERE project_id = $1 ORDER BY scene COLLATE "C", take`, [projectId])
        : await this.sql.query<TakeRow>(`SELECT * FROM takes WHERE project_id = $1 AND scene = $2 ORDER BY take`, [projectId, scene]);
    return rows.map(takeFromRow);
  }

  /** The picked take number of each scene that has one. */
  async picks(projectId: number): Promise<Map<string, number>> {
    const rows = await this.sql.query<{ scene: string; take: number }>(`SELECT scene, take FROM take_picks WHERE project_id = $1`, [projectId]);
    return new Map(rows.map((r) => [r.scene, r.take]));
  }

  /**
   * Adds the scene's next take, numbered after its last one, and returns it. The project's row is held while
   * the number is chosen, so two machines adding a take of one scene number them one after the other.
   */
  async add(take: Omit<TakeRecord, 'take'>): Promise<TakeRecord> {
    return this.sql.tx(async (q) => {
      await q.query(`SELECT 1 FROM projects WHERE id = $1 FOR NO KEY UPDATE`, [take.projectId]);
      const [row] = await q.query<{ take: number }>(
        `INSERT INTO takes (project_id, scene, take, variant, image_prompt, motion_prompt, narration, duration, seed,
                            image_task_id, clip_task_id, speech_task_id, created_at)
         SELECT $1::bigint, $2::text, coalesce(max(take), 0) + 1, $3::integer, $4::text, $5::text, $6::text, $7::double precision, $8::bigint,
                $9::bigint, $10::bigint, $11::bigint, $12::bigint
           FROM takes WHERE project_id = $1::bigint AND scene = $2::text
         RETURNING take`,
        [take.projectId, take.scene, take.variant, take.imagePrompt, take.motionPrompt, take.narration, take.duration, take.seed, take.imageTaskId, take.clipTaskId, take.speechTaskId, take.createdAt],
      );
      return { ...take, take: row!.take };
    });
  }

  /** Makes `take` the one its scene renders. */
  async pick(projectId: number, scene: string, take: number, now: number): Promise<void> {
    await this.sql.query(
      `INSERT INTO take_picks (project_id, scene, take, picked_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (project_id, scene) DO UPDATE SET take = excluded.take, picked_at = excluded.picked_at`,
      [projectId, scene, take, now],
    );
  }
}
