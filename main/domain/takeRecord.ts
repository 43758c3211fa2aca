/** One take of a scene as it was made: its prompts and seed, and the tasks that made its image, clip and speech. */
export interface TakeRecord {
  projectId: number;
  scene: string;
  take: number;
  /** The storyboard's take number that varied the seed. */
  variant: number;
  imagePrompt: string;
  motionPrompt: string;
  narration: string | null;
  duration: number;
  seed: number;
  imageTaskId: number;
  clipTaskId: number;
  speechTaskId: number | null;
  createdAt: number;
}

/** A take as both stores keep it: one row of `takes`. */
export interface TakeRow {
  project_id: number;
  scene: string;
  take: number;
  variant: number;
  image_prompt: string;
  motion_prompt: string;
  narration: string | null;
  duration: number;
  seed: number;
  image_task_id: number;
  clip_task_id: number;
  speech_task_id: number | null;
  created_at: number;
}

export const takeFromRow = (r: TakeRow): TakeRecord => ({
  projectId: r.project_id,
  scene: r.scene,
  take: r.take,
  variant: r.variant,
  imagePrompt: r.image_prompt,
  motionPrompt: r.motion_prompt,
  narration: r.narration,
  duration: r.duration,
  seed: r.seed,
  imageTaskId: r.image_task_id,
  clipTaskId: r.clip_task_id,
  speechTaskId: r.speech_task_id,
  createdAt: r.created_at,
});
