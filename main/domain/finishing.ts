import { isAbsoluteAnywhere } from './storedPaths.ts';

/**
 * How the film is finished around its scenes: the cut from each scene to the next, subtitles from the narration,
 * a music bed under the voice and the loudness the mix is brought to. None of it is bought: changing any of it
 * re-renders the film and buys nothing again.
 */
export type TransitionType = 'cut' | 'crossfade' | 'fade-black';

export const TRANSITION_TYPES: readonly TransitionType[] = ['cut', 'crossfade', 'fade-black'];

/**
 * `crossfade`: the next scene shows through this one for `duration` seconds, picture and sound, so the film is that
 * much shorter than its scenes. `fade-black`: this scene fades to black in the first half of `duration` and the
 * next fades in from black in the second; nothing overlaps.
 */
export interface Transition {
  type: TransitionType;
  duration: number;
}

export const CUT: Transition = { type: 'cut', duration: 0 };

/** How a scene shown as its still moves: no clip is bought for it, and the render moves over the still. */
export type Motion = 'push-in' | 'pull-out' | 'pan-left' | 'pan-right' | 'none';

export const MOTIONS: readonly Motion[] = ['push-in', 'pull-out', 'pan-left', 'pan-right', 'none'];

/** The part of a scene's clip it shows: from `in` seconds to `out` (the clip's end when absent). */
export interface Trim {
  in: number;
  out?: number;
}

export interface Subtitles {
  /** Burned into the picture as well as written beside the film and carried as a soft track. */
  burn: boolean;
}

/** A music bed: a file (copied into the project with its checksum at Generate) or a finished audio task. */
export type Music = ({ file: string; sha256?: string; name?: string } | { task: number }) & {
  /** Loudness of the music against the narration, in LU, before it ducks under the voice. */
  volume: number;
};

/** The bed's default level: well under the voice, as a bed under speech is mixed. */
export const MUSIC_UNDER_VOICE_LU = -12;

/** Integrated loudness the mix is brought to: what the places creators publish to play at. */
export const DEFAULT_LOUDNESS_LUFS = -14;

/** The true peak the mix never passes, so a player's decoder does not clip it. */
export const TRUE_PEAK_DBTP = -1;

type Fail = (where: string, what: string) => never;

function isObject(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

function only(o: Record<string, unknown>, known: readonly string[], where: string, fail: Fail): void {
  for (const key of Object.keys(o)) if (!known.includes(key)) fail(where, `has no field "${key}"; its fields are ${known.join(', ')}`);
}

function number(v: unknown, where: string, min: number, max: number, fail: Fail): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) fail(where, `must be a number from ${min} to ${max}`);
  return v;
}

/** The longest transition: two seconds is already a slow dissolve for a short clip. */
const TRANSITION_MAX_SEC = 2;

export function readTransition(v: unknown, where: string, fail: Fail): Transition | undefined {
  if (v === undefined) return undefined;
  const example = `must be {"type": "cut"}, {"type": "crossfade", "duration": 0.5} or {"type": "fade-black", "duration": 1}`;
  if (!isObject(v)) fail(where, example);
  only(v, ['type', 'duration'], where, fail);
  if (!TRANSITION_TYPES.includes(v.type as TransitionType)) fail(`${where}.type`, `must be one of ${TRANSITION_TYPES.map((t) => `"${t}"`).join(', ')}`);
  const type = v.type as TransitionType;
  if (type === 'cut') return CUT;
  return { type, duration: v.duration === undefined ? 0.5 : number(v.duration, `${where}.duration`, 0.1, TRANSITION_MAX_SEC, fail) };
}

export function readMotion(v: unknown, where: string, fail: Fail): Motion | undefined {
  if (v === undefined) return undefined;
  if (!MOTIONS.includes(v as Motion)) fail(where, `must be one of ${MOTIONS.map((m) => `"${m}"`).join(', ')} (the scene shows its still with that move, and no clip is bought for it)`);
  return v as Motion;
}

export function readTrim(v: unknown, where: string, fail: Fail): Trim | undefined {
  if (v === undefined) return undefined;
  if (!isObject(v)) fail(where, 'must be {"in": 1.5, "out": 4} (seconds of the clip to show; "out" absent: to its end)');
  only(v, ['in', 'out'], where, fail);
  const from = v.in === undefined ? 0 : number(v.in, `${where}.in`, 0, 600, fail);
  if (v.out === undefined) return { in: from };
  const to = number(v.out, `${where}.out`, 0.1, 600, fail);
  if (to <= from + 0.1) fail(`${where}.out`, `must be later than "in" (${from}) by more than 0.1 s`);
  return { in: from, out: to };
}

function readMusic(v: unknown, fail: Fail): Music | undefined {
  if (v === undefined || v === null) return undefined;
  const example = 'must be {"file": "/full/path/to/music.mp3"} or {"task": 12} (a finished audio task), with "volume" in LU against the voice if you like (-12 by default)';
  if (!isObject(v)) fail('music', example);
  const volume = v.volume === undefined ? MUSIC_UNDER_VOICE_LU : number(v.volume, 'music.volume', -40, 0, fail);
  if ('task' in v) {
    only(v, ['task', 'volume'], 'music', fail);
    if (typeof v.task !== 'number' || !Number.isInteger(v.task) || v.task < 1) fail('music.task', 'must be a task number, like 12');
    return { task: v.task, volume };
  }
  if (typeof v.file !== 'string' || v.file.trim() === '') fail('music', example);
  only(v, ['file', 'sha256', 'name', 'volume'], 'music', fail);
  const file = v.file.trim();
  if (!isAbsoluteAnywhere(file)) fail('music.file', `"${file}" is not a full path; give the music's full path, like /full/path/to/music.mp3`);
  if (v.sha256 !== undefined && (typeof v.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(v.sha256))) fail('music.sha256', 'is the file\'s SHA-256 in 64 hex digits; leave it out and the studio fills it in');
  // The name a file sent from the app had, shown in place of its copy's.
  if (v.name !== undefined && typeof v.name !== 'string') fail('music.name', 'must be text: the name the music is shown by');
  const name = typeof v.name === 'string' ? v.name.trim() : '';
  return { file, ...(typeof v.sha256 === 'string' ? { sha256: v.sha256 } : {}), ...(name ? { name } : {}), volume };
}

function readSubtitles(v: unknown, fail: Fail): Subtitles {
  if (!isObject(v)) fail('subtitles', 'must be {"burn": true} (burned into the picture) or {"burn": false} (beside the film only)');
  only(v, ['burn'], 'subtitles', fail);
  if (v.burn !== undefined && typeof v.burn !== 'boolean') fail('subtitles.burn', 'must be true or false');
  return { burn: v.burn === true };
}

/** The storyboard's finishing fields that were given, each checked and named when wrong. */
export function readFinishing(v: Record<string, unknown>, fail: Fail): { transition?: Transition; subtitles?: Subtitles; music?: Music; loudness?: number } {
  const transition = readTransition(v.transition, 'transition', fail);
  const music = readMusic(v.music, fail);
  return {
    ...(transition ? { transition } : {}),
    ...(v.subtitles === undefined ? {} : { subtitles: readSubtitles(v.subtitles, fail) }),
    ...(music ? { music } : {}),
    ...(v.loudness === undefined ? {} : { loudness: number(v.loudness, 'loudness', -30, -9, fail) }),
  };
}

export const FINISHING_FIELDS = ['transition', 'subtitles', 'music', 'loudness'] as const;
