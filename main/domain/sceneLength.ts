/**
 * How long a scene lasts beside its narration. "narration" (the default): the scene grows to hold all of its
 * narration and a short tail, so paid speech is never cut. "scene": the scene keeps the length written for it,
 * and a longer narration is cut at its end (the estimate says by how much).
 */
export type SceneFit = 'narration' | 'scene';

export const SCENE_FITS: readonly SceneFit[] = ['narration', 'scene'];

/** Seconds of picture after the last word, so a scene does not cut away mid-breath. */
const NARRATION_TAIL_SEC = 0.5;

/**
 * The seconds a scene fills: its own length, or, fitted to its narration, long enough for all of it and the tail,
 * and for `margin`: the seconds its transitions take, which the narration keeps clear of.
 */
export function sceneLength(duration: number, narrationSec: number | null, fit: SceneFit, margin = 0): number {
  if (fit === 'scene' || narrationSec === null) return duration;
  return Math.max(duration, round3(narrationSec + NARRATION_TAIL_SEC + margin));
}

/** Seconds of narration a scene of this fit would cut, or 0. */
export function narrationCut(duration: number, narrationSec: number | null, fit: SceneFit): number {
  if (narrationSec === null) return 0;
  return Math.max(0, round3(narrationSec - sceneLength(duration, narrationSec, fit)));
}

/**
 * Words per minute a voice speaks at its normal speed. eSpeak NG, the simulator's voice: "-s <integer> Speed in
 * words per minute, default is 175" (espeak-ng(1), https://man.archlinux.org/man/espeak-ng.1). The providers'
 * voices document no rate; 150 words a minute is the usual figure for a person speaking
 * (https://learn.microsoft.com/en-us/answers/questions/530697/need-to-limit-the-audio-time-using-azure-text-to-s).
 */
export const VOICE_WPM = { simulator: 175, other: 150 } as const;

/**
 * The narration's length predicted from its text, before it is bought: its words at the voice's rate, divided by
 * the speed asked of the voice (OpenAI `speed`, 1.0 by default; ElevenLabs `voice_settings.speed`).
 */
export function predictNarrationSec(text: string, wordsPerMinute: number, speed = 1): number {
  const words = text.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length;
  return round3((words / wordsPerMinute) * 60 / (speed > 0 ? speed : 1));
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

/**
 * The seconds a scene with the creator's own clip fills: all of the clip (they chose its length), or with fit
 * "narration" longer still to hold its narration and the tail; with fit "scene", the length written for it.
 */
export function ownClipSceneLength(duration: number, clipSec: number, narrationSec: number | null, fit: SceneFit, margin = 0): number {
  if (fit === 'scene') return duration;
  return Math.max(round3(clipSec), narrationSec === null ? 0 : round3(narrationSec + NARRATION_TAIL_SEC + margin));
}

/** Seconds at the end of the creator's own clip a scene of this fit cuts, or 0. */
export function ownClipCut(duration: number, clipSec: number, fit: SceneFit): number {
  return fit === 'scene' ? Math.max(0, round3(clipSec - duration)) : 0;
}

/** How much the sound of the creator's own clip is lowered under a narration, so the words stay clear over it. */
export const OWN_CLIP_UNDER_NARRATION_DB = -12;
