/** How long each scene's clip lasts, as the estimate sees it, so it can say how long the picture holds still. */
import { clipSecondsMade } from '../providers/clipDurations.ts';
import type { PlannedStep } from './planner.ts';
import type { Verdict } from './reuse.ts';

/** A scene's clip as the estimate sees it: how long it lasts, and whether it is one made before clips followed the narration. */
export interface SceneClip {
  seconds: number;
  /** Reused, and made at the scene's written length before the studio asked for a clip as long as the narration. */
  former: boolean;
}

/** Each scene's own clip step (not a variation's) by scene: the clip reused, or the one to be made. */
export function sceneClips(decided: readonly { step: PlannedStep; verdict: Verdict }[]): Map<string, SceneClip> {
  const clips = new Map<string, SceneClip>();
  for (const { step, verdict } of decided) {
    if (step.kind !== 'clip' || step.scene === null || step.key !== `${step.scene}:clip`) continue;
    const asked = verdict.action === 'reuse' ? (verdict.task.input as Record<string, unknown> | null)?.duration : step.input.duration;
    if (typeof asked !== 'number' && typeof asked !== 'string') continue;
    const seconds = clipSecondsMade(step.provider, step.model, asked);
    const planned = clipSecondsMade(step.provider, step.model, step.input.duration as number);
    clips.set(step.scene, { seconds, former: verdict.action === 'reuse' && seconds < planned });
  }
  return clips;
}
