/** What the estimate says of a step reused from its former input (see PlannedStep.formerInput), by what changed since. */
import type { PlannedStep } from './planner.ts';

/** Said of a still or clip reused from before the studio asked models for the project's shape. */
const UNSIZED = 'made before the studio asked the model for the project\'s shape, so it has the model\'s own; the render fits it to the frame (a new take of the scene makes one in the frame\'s shape)';

/** Said of a clip reused from before the studio asked for a clip as long as the scene's narration. */
const WRITTEN_LENGTH = 'made at the scene\'s written length, before the studio asked for a clip as long as its narration; the render holds its last frame for the rest (a new take of the scene makes one as long)';

/** Said of a longer clip reused for a scene whose narration was shortened since it was bought. */
export function coveringWhy(task: { input: unknown }): string {
  const seconds = (task.input as { duration?: unknown } | null)?.duration;
  return `a clip of ${seconds} s bought before, for a longer narration, covers this scene; the render uses the part it needs`;
}

/** Why a step reused by its former input is kept as it is, in plain words. */
export function formerWhy(step: PlannedStep): string {
  const former = step.formerInput ?? {};
  const sized = Object.keys(step.input).some((k) => !Object.hasOwn(former, k));
  const length = step.kind === 'clip' && step.input.duration !== former.duration;
  return [...(sized ? [UNSIZED] : []), ...(length ? [WRITTEN_LENGTH] : [])].join('; and ');
}
