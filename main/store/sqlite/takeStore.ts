import type { Db } from '../../db/database.ts';
import { takeFromRow, type TakeRecord, type TakeRow } from '../../domain/takeRecord.ts';
import type { TakeStore } from '../port.ts';
import { refuseIfMoved } from './projectMoves.ts';

/** The takes of each scene and which one goes into the render. Rows are added, never replaced by a later take. */
export class SqliteTakeStore implements TakeStore {
  constructor(private readonly db: Db) {}

  /** A project's takes (of one scene, or all), in scene and take order. */
  async list(projectId: number, scene?: string): Promise<TakeRecord[]> {
    const rows =
      scene === undefined
        ? this.db.prepare(`SELECT * FROM takes WHERE project_id = ? ORDER BY scene, take`).all(projectId)
        : this.db.prepare(`SELECT * FROM takes WHERE project_id = ? AND scene = ? ORDER BY take`).all(projectId, scene);
    return (rows as TakeRow[]).map(takeFromRow);
  }

  /** The picked take number of each scene that has one. */
  async picks(projectId: number): Promise<Map<string, number>> {
    const rows = this.db.prepare(`SELECT scene, take FROM take_picks WHERE project_id = ?`).all(projectId) as { scene: string; take: number }[];
    return new Map(rows.map((r) => [r.scene, r.take]));
  }

  /** Adds the scene's next take, numbered after its last one, and returns it. */
  async add(take: Omit<TakeRecord, 'take'>): Promise<TakeRecord> {
    refuseIfMoved(this.db, take.projectId);
    const { next } = this.db.prepare(`SELECT coalesce(max(take), 0) + 1 AS next FROM takes WHERE project_id = ? AND scene = ?`).get(take.projectId, take.scene) as {
      next: number;
    };
    this.db
      .prepare(
        `INSERT INTO takes (project_id, scene, take, variant, image_prompt, motion_prompt, narration, duration, seed,
                            image_task_id, clip_task_id, speech_task_id, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(take.projectId, take.scene, next, take.variant, take.imagePrompt, take.motionPrompt, take.narration, take.duration, take.seed, take.imageTaskId, take.clipTaskId, take.speechTaskId, take.createdAt);
    return { ...take, take: next };
  }

  /** Makes `take` the one its scene renders. */
  async pick(projectId: number, scene: string, take: number, now: number): Promise<void> {
    refuseIfMoved(this.db, projectId);
    this.db
      .prepare(
        `INSERT INTO take_picks (project_id, scene, take, picked_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (project_id, scene) DO UPDATE SET take = excluded.take, picked_at = excluded.picked_at`,
      )
      .run(projectId, scene, take, now);
  }
}
