import { narrationCut, predictNarrationSec, sceneLength, VOICE_WPM, type SceneFit } from '../domain/sceneLength.ts';
import type { Scene, StepChoice, StepKind, Storyboard } from '../domain/storyboard.ts';
import { stepChoice } from './stepChoice.ts';
import { cutsOf, narrationMargins } from '../domain/filmTimeline.ts';
import { CUT } from '../domain/finishing.ts';

/** A scene's narration as the estimate foresees it, before anything is bought. */
export interface NarrationNote {
  scene: string;
  /** Seconds the narration is expected to last, from its words and the voice's rate. */
  predictedSec: number;
  fit: SceneFit;
  /** Seconds the storyboard gives the scene. */
  duration: number;
  /** Seconds the scene will fill: its own length, or with fit "narration", long enough for all of it. */
  sceneSec: number;
  /** Seconds of narration cut at the scene's end (only with fit "scene"), or 0. */
  cutSec: number;
  /** Where the rate comes from. */
  source: string;
  /** Seconds the scene's clip lasts (the one reused, or the one to be made); null when no clip step is planned. */
  clipSec: number | null;
  /** Reused, made at the written length before clips followed the narration. */
  clipFormer: boolean;
  /** Seconds of the scene the clip does not reach: its last frame is held still for them. */
  heldSec: number;
  /** Seconds of the scene its transitions take, which its narration keeps clear of. */
  transitionSec: number;
}

/** The speed asked of the voice: OpenAI's `speed`, or ElevenLabs' `voice_settings.speed`; 1 when none is set. */
function speedOf(choice: StepChoice): number {
  const o = choice.options ?? {};
  const settings = o.voice_settings as Record<string, unknown> | undefined;
  const speed = typeof o.speed === 'number' ? o.speed : typeof settings?.speed === 'number' ? settings.speed : 1;
  return speed > 0 ? speed : 1;
}

/** A scene's narration length foreseen from its words and its voice's rate, and where the rate comes from; null without narration. */
export function predictedNarration(board: Storyboard, defaults: Record<StepKind, StepChoice>, scene: Scene): { seconds: number; source: string } | null {
  if (!scene.narration) return null;
  const voice = stepChoice(board, defaults, scene, 'speech');
  const wpm = voice.provider === 'simulator' ? VOICE_WPM.simulator : VOICE_WPM.other;
  const speed = speedOf(voice);
  const source = `${wpm} words a minute${speed === 1 ? '' : ` at speed ${speed}`}, ${voice.provider === 'simulator' ? "eSpeak NG's documented default" : 'a usual speaking rate'}`;
  return { seconds: predictNarrationSec(scene.narration, wpm, speed), source };
}

/**
 * Each narrated scene's predicted narration length, the length the scene will take, what would be cut, and how long
 * its clip (`clips`, by scene: see sceneClips.ts) leaves the picture held still.
 */
export function narrationNotes(board: Storyboard, defaults: Record<StepKind, StepChoice>, clips: ReadonlyMap<string, { seconds: number; former: boolean }> = new Map()): NarrationNote[] {
  const cuts = cutsOf(board.scenes, board.transition ?? CUT);
  return board.scenes.flatMap((scene, i) => {
    const predicted = predictedNarration(board, defaults, scene);
    if (!predicted) return [];
    const { seconds: predictedSec, source } = predicted;
    // The narration keeps clear of the transitions into and out of its scene (see renderExecutor.ts).
    const { before, after } = narrationMargins(cuts, i);
    const sceneSec = sceneLength(scene.duration, predictedSec, scene.fit, before + after);
    const clip = clips.get(scene.id);
    return [{
      scene: scene.id,
      predictedSec,
      fit: scene.fit,
      duration: scene.duration,
      sceneSec,
      cutSec: narrationCut(scene.duration, predictedSec, scene.fit),
      source,
      clipSec: clip?.seconds ?? null,
      clipFormer: clip?.former ?? false,
      heldSec: clip ? Math.max(0, Math.round((sceneSec - clip.seconds) * 10) / 10) : 0,
      transitionSec: before + after,
    }];
  });
}

/** What the scene's clip leaves of the picture, in plain words; empty when it covers the scene. */
function clipWords(n: NarrationNote): string {
  if (n.clipSec === null || (n.heldSec === 0 && !n.clipFormer && n.sceneSec <= n.duration)) return '';
  const held = n.heldSec > 0 ? `, so the picture holds still for the last ${n.heldSec.toFixed(1)} s` : '';
  if (n.clipFormer) return `; its clip, made before at ${n.clipSec} s, is reused${held} (a new take of the scene makes one as long as the narration)`;
  if (n.heldSec === 0) return `, its clip asked for ${n.clipSec} s`;
  // A clip is asked for its narration's length, not its transitions': adding a transition buys no clip again.
  const underTransitions = n.clipSec! >= n.sceneSec - n.transitionSec - 0.05;
  return underTransitions
    ? `; its clip is asked for ${n.clipSec} s, the narration's length${held}, under its transitions`
    : `; its clip is asked for ${n.clipSec} s, the longest the model makes${held}`;
}

/** The estimate's line for one narrated scene, in plain words. */
export function narrationWords(n: NarrationNote): string {
  const about = `${n.scene}: narration about ${n.predictedSec.toFixed(1)} s`;
  const rate = ` (predicted at ${n.source})`;
  if (n.cutSec > 0) return `${about}${rate} will be cut to the scene's ${n.duration} s, losing about ${n.cutSec.toFixed(1)} s (fit "scene"; remove it to keep every word)`;
  if (n.sceneSec > n.duration) return `${about}${rate}: the scene grows from ${n.duration} s to about ${n.sceneSec.toFixed(1)} s to hold it${clipWords(n)}`;
  return `${about}${rate}, within the scene's ${n.duration} s${clipWords(n)}`;
}
