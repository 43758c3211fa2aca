import type { Scene, StepChoice, StepKind, Storyboard } from '../domain/storyboard.ts';

/** Which provider and model make a scene's step: the scene's own choice, else the storyboard's, else the settings' default. */
export function stepChoice(board: Storyboard, defaults: Record<StepKind, StepChoice>, scene: Pick<Scene, 'steps'>, kind: StepKind): StepChoice {
  return scene.steps[kind] ?? board.steps[kind] ?? defaults[kind];
}
