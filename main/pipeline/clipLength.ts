/** How long a scene's clip is asked to be. */
import { sceneLength } from '../domain/sceneLength.ts';
import type { Scene, StepChoice, StepKind, Storyboard } from '../domain/storyboard.ts';
import { clipSecondsToAsk } from '../providers/clipDurations.ts';
import { predictedNarration } from './narrationLengths.ts';

/**
 * The seconds a scene's clip is asked for. A scene fitted to its narration (fit "narration") whose narration is
 * foreseen to run past the written length gets a clip that covers the narration's PREDICTED length and tail,
 * rounded up to the lengths the model makes and capped at its longest. Predicted from the words, never measured,
 * so the clip's input is known before the speech is bought and does not change once it is; rounding up means a
 * small edit to the narration seldom changes it, and so seldom buys the clip again. Any other scene: its written
 * length, as before.
 */
export function clipSeconds(board: Storyboard, defaults: Record<StepKind, StepChoice>, scene: Scene, clip: StepChoice): number {
  if (scene.fit !== 'narration') return scene.duration;
  const predicted = predictedNarration(board, defaults, scene);
  if (!predicted) return scene.duration;
  const covers = sceneLength(scene.duration, predicted.seconds, 'narration');
  return covers > scene.duration ? Math.max(scene.duration, clipSecondsToAsk(clip.provider, clip.model, covers)) : scene.duration;
}
