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
