import type { Scene } from '../domain/storyboard.ts';
import type { Task } from '../domain/tasks/model.ts';

/**
 * The clips bought from a scene's own still, oldest first. They were paid for, yet none is a take (a take records a
 * bought still), so they are listed by task: each one stays reachable with `"clip": {"task": N}`. A still is matched
 * by its checksum (a file) or its task (a library result).
 */
export function clipsFromOwnStill(tasks: readonly Task[], scene: Scene): Task[] {
  const still = scene.image;
  if (!still) return [];
  const from = (url: unknown): boolean => {
    const ref = url as { sha256?: unknown; $output?: unknown } | null;
    if (!ref || typeof ref !== 'object') return false;
    if ('file' in still) return still.sha256 !== undefined && ref.sha256 === still.sha256;
    return 'task' in still && ref.$output === still.task;
  };
  return tasks.filter((t) => t.kind === 'clip' && from((t.input as { image_url?: unknown } | null)?.image_url)).sort((a, b) => a.id - b.id);
}
