import { cutsOf, filmTimeline } from '../domain/filmTimeline.ts';
import { CUT, DEFAULT_LOUDNESS_LUFS, MUSIC_UNDER_VOICE_LU } from '../domain/finishing.ts';
import type { Storyboard } from '../domain/storyboard.ts';
import type { NarrationNote } from './narrationLengths.ts';

/** The finished film as the estimate foresees it: its length once the transitions overlap, and how it is finished. */
export interface FilmNote {
  /** Seconds the film should last: its scenes' less what crossfades overlap. */
  seconds: number;
  /** Seconds of its scenes, end to end. */
  scenesSec: number;
  /** Seconds the crossfades show two scenes at once. */
  overlapSec: number;
  /** In plain words: the length, the cuts, the subtitles, the music and the loudness. */
  words: string;
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** Each scene's predicted length (its narration's, from `narration`, else its written one), laid out with its cuts. */
export function filmNote(board: Storyboard, narration: readonly NarrationNote[], musicWords: string | null): FilmNote {
  const lengths = new Map(narration.map((n) => [n.scene, n.sceneSec]));
  const cuts = cutsOf(board.scenes, board.transition ?? CUT);
  const seconds = board.scenes.map((s) => lengths.get(s.id) ?? s.duration);
  const timeline = filmTimeline(seconds, cuts, board.fps);
  const scenesSec = timeline.spans.reduce((n, s) => n + s.frames, 0) / board.fps;
  const film = timeline.frames / board.fps;
  const overlapSec = Math.round((scenesSec - film) * 1000) / 1000;
  const used = cuts.slice(0, -1);
  const crossfades = used.filter((c) => c.type === 'crossfade').length;
  const fades = used.filter((c) => c.type === 'fade-black').length;
  const joins = crossfades + fades === 0 ? 'plain cuts' : [crossfades && plural(crossfades, 'crossfade'), fades && plural(fades, 'fade through black')].filter(Boolean).join(' and ');
  const overlap = overlapSec > 0 ? ` (${scenesSec.toFixed(1)} s of scenes, ${overlapSec.toFixed(1)} s of them shown through crossfades)` : '';
  const narrated = board.scenes.some((s) => s.narration);
  const subtitles = narrated ? (board.subtitles?.burn ? 'subtitles burned in and beside it' : 'subtitles beside it and as a track to turn on') : 'no narration, so no subtitles';
  const music = board.music ? `music under the voice (${musicWords ?? 'yours'}, ${-(board.music.volume ?? MUSIC_UNDER_VOICE_LU)} LU under it, lower while someone speaks)` : 'no music';
  const stills = board.scenes.filter((s) => s.motion !== undefined).length;
  const moved = stills > 0 ? `; ${plural(stills, 'scene')} shown as ${stills === 1 ? 'its' : 'their'} still with a move, no clip bought` : '';
  const words = `about ${film.toFixed(1)} s${overlap}; ${joins} between scenes${moved}; ${subtitles}; ${music}; the sound at ${board.loudness ?? DEFAULT_LOUDNESS_LUFS} LUFS`;
  return { seconds: Math.round(film * 1000) / 1000, scenesSec: Math.round(scenesSec * 1000) / 1000, overlapSec, words };
}
