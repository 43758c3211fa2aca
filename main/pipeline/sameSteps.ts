/**
 * Steps of one Generate that are one purchase: the same kind, provider, model and input (two scenes with the same
 * narration, or the same image prompt and seed, and the clips made from those). The first is bought; each later
 * one is marked `sameAs` it, is not bought again, and stands for the same task.
 */
import { canonicalJson } from '../domain/tasks/inputHash.ts';
import { renameStepRefs, type PlannedStep } from './planner.ts';

/** The plan with each step that repeats an earlier one marked `sameAs` that earlier step's key. Pure. */
export function markSameSteps(steps: readonly PlannedStep[]): PlannedStep[] {
  const first = new Map<string, string>();
  const byInput = new Map<string, string>();
  return steps.map((step) => {
    if (step.kind === 'render') return step;
    const same = canonicalJson([step.kind, step.provider, step.model, renameStepRefs(step.input, first), renameStepRefs(step.formerInput, first), [...(step.dependsOnTasks ?? [])]]);
    const earlier = byInput.get(same);
    if (earlier === undefined) {
      byInput.set(same, step.key);
      return step;
    }
    first.set(step.key, earlier);
    return { ...step, sameAs: earlier };
  });
}
