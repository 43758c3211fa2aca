import type { FilmTimeline } from '../domain/filmTimeline.ts';

/**
 * The film's sound, laid out by the same frame counts as its picture: each scene's narration (from the end of
 * the transition into it) over its own clip's sound when kept, the scenes joined with the picture's crossfades and
 * fades, a music bed under it all, ducked while someone speaks, and the whole brought to one loudness.
 *
 * Two ffmpeg runs: the mix (written as WAV, and measured through the limiter at several gains on the way), then the
 * film's own encode, which lifts it by the gain found. Each narration and music file is measured once, by its
 * checksum, so the mix can set the voice and the bed at their levels before it is made.
 */
export interface SceneSound {
  narration: string | null;
  /** Seconds into the scene the narration starts: after the transition into it, so no word is faded. */
  narrationAt: number;
  clip: string;
  /** The clip's own sound at this gain in dB, or null when it is not used. */
  clipSoundDb: number | null;
  /** The part of the clip the scene shows, and so of its sound. */
  trim?: { in: number; out?: number };
}

export const SAMPLE_RATE = 48_000;

/** Integrated loudness in LUFS as ebur128 measured it; -70 (its floor) for silence. */
export type Loudness = number;

/**
 * A brickwall limiter at -2 dBFS (alimiter, its auto-level off), so a mix lifted to the target keeps its true peak at
 * -1 dBTP or under once encoded (AAC adds a few tenths of a dB to peaks): speech at -14 LUFS peaks higher than that,
 * and loudnorm would otherwise fall back to its dynamic mode, which lands short of the target on a short film.
 */
const LIMITER = 'alimiter=limit=0.794:attack=5:release=50:level=0';

const stereo = `aresample=${SAMPLE_RATE},aformat=sample_fmts=fltp:channel_layouts=stereo`;

const audible = (l: Loudness) => Number.isFinite(l) && l > -70;

/** Each file measured whole for loudness, in one run: every narration of a film, or its music. */
export function measureArgs(files: readonly string[]): string[] {
  const inputs = files.flatMap((f) => ['-i', f]);
  const filters = files.map((_, i) => `[${i}:a]${stereo},ebur128@file${i}=framelog=verbose[m${i}]`);
  return [...inputs, '-filter_complex', filters.join(';'), ...files.flatMap((_, i) => ['-map', `[m${i}]`, '-f', 'null', '-'])];
}

/** What measureArgs found of each file, in order. */
export function measuredFiles(stderr: string, count: number): Loudness[] {
  return Array.from({ length: count }, (_, i) => summaryOf(stderr, `ebur128@file${i}`));
}

/**
 * The loudness of the narrations one after another, from each one's own: their power averaged over the seconds each
 * is spoken, as the integrated measure averages a programme's blocks.
 */
export function voiceLoudness(narrations: readonly { loudness: Loudness; seconds: number }[]): Loudness {
  const heard = narrations.filter((n) => audible(n.loudness) && n.seconds > 0);
  const seconds = heard.reduce((sum, n) => sum + n.seconds, 0);
  if (seconds === 0) return -70;
  return 10 * Math.log10(heard.reduce((sum, n) => sum + n.seconds * 10 ** (n.loudness / 10), 0) / seconds);
}

/** How many inputs these arguments open: the index the next one gets. */
const inputsIn = (args: readonly string[]) => args.filter((a) => a === '-i').length;

/** The voice track's filters: the narrations placed in their scenes and joined like the picture, as [voice]. */
function voiceFilters(scenes: readonly SceneSound[], timeline: FilmTimeline, args: string[]): string[] {
  const filters: string[] = [];
  const { fps, spans } = timeline;
  scenes.forEach((scene, i) => {
    const span = spans[i]!;
    const d = (span.frames / fps).toFixed(4);
    const fades = [
      ...(span.fadeIn > 0 ? [`afade=t=in:d=${(span.fadeIn / fps).toFixed(4)}`] : []),
      ...(span.fadeOut > 0 ? [`afade=t=out:st=${((span.frames - span.fadeOut) / fps).toFixed(4)}:d=${(span.fadeOut / fps).toFixed(4)}`] : []),
    ].map((f) => `,${f}`).join('');
    const fit = (from: string, extra = '') => `${from}${stereo},${extra}apad,atrim=duration=${d},asetpts=PTS-STARTPTS`;
    const delay = Math.round(scene.narrationAt * 1000);
    const spoken = inputsIn(args);
    if (scene.narration) args.push('-i', scene.narration);
    else args.push('-f', 'lavfi', '-t', d, '-i', `anullsrc=r=${SAMPLE_RATE}:cl=stereo`);
    const shifted = scene.narration && delay > 0 ? `adelay=${delay}|${delay},` : '';
    if (scene.clipSoundDb === null) {
      filters.push(`${fit(`[${spoken}:a]`, shifted)}${fades}[a${i}]`);
      return;
    }
    const own = inputsIn(args);
    args.push('-i', scene.clip);
    // Summed, not averaged (amix would halve the narration): the two stereo pairs merged and added channel by channel.
    const cut = scene.trim ? `atrim=start=${scene.trim.in}${scene.trim.out === undefined ? '' : `:end=${scene.trim.out}`},asetpts=PTS-STARTPTS,` : '';
    filters.push(`${fit(`[${spoken}:a]`, shifted)}[n${i}]`, `${fit(`[${own}:a]`, `${cut}volume=${scene.clipSoundDb}dB,`)}[c${i}]`);
    filters.push(`[n${i}][c${i}]amerge=inputs=2,pan=stereo|c0=c0+c2|c1=c1+c3${fades}[a${i}]`);
  });
  let joined = 'a0';
  for (let i = 1; i < scenes.length; i++) {
    const overlap = spans[i]!.head;
    const to = `j${i}`;
    filters.push(overlap > 0 ? `[${joined}][a${i}]acrossfade=d=${(overlap / fps).toFixed(4)}:c1=tri:c2=tri[${to}]` : `[${joined}][a${i}]concat=n=2:v=0:a=1[${to}]`);
    joined = to;
  }
  filters.push(`[${joined}]anull[voice]`);
  return filters;
}

/** Seconds the bed fades in at the start and out at the end. */
const MUSIC_FADE_IN_SEC = 1;
const MUSIC_FADE_OUT_SEC = 2;

export interface Bed {
  path: string;
  loudness: Loudness;
  /** LU under the voice. */
  volume: number;
}

/**
 * Gains in dB over the mix as first levelled, at which it is measured through the limiter: the one that meets the
 * target lies between two of them (a limiter takes a little loudness with the peaks it cuts, more as the gain grows),
 * and the voice's level, worked out from its narrations, is seldom off by more than a few dB.
 */
const TRIALS = [-9, -6, -3, -1, 0, 1, 2, 3, 4, 6, 9];

/**
 * The mix, written to `output` as WAV: the voice brought to the target (by `voice`, its loudness worked out from its
 * narrations) and, with a bed, the music `volume` LU under it, looped or cut to the film's length, faded in and out,
 * and pressed down by a compressor keyed on the voice (sidechaincompress), so it falls well under every word and comes
 * back between. On the way, the mix is measured through the limiter at each of the trial gains.
 */
export function mixArgs(scenes: readonly SceneSound[], timeline: FilmTimeline, voice: Loudness, bed: Bed | null, target: number, output: string): string[] {
  const args: string[] = [];
  const filters = voiceFilters(scenes, timeline, args);
  const voiceGain = audible(voice) ? target - voice : 0;
  const seconds = timeline.frames / timeline.fps;
  if (!bed) {
    filters.push(`[voice]volume=${voiceGain.toFixed(2)}dB,asplit[mix][m2]`);
  } else {
    const musicGain = audible(bed.loudness) ? target + bed.volume - bed.loudness : 0;
    const fadeOut = Math.min(MUSIC_FADE_OUT_SEC, seconds / 2);
    const music = inputsIn(args);
    args.push('-stream_loop', '-1', '-i', bed.path);
    filters.push(
      `[voice]volume=${voiceGain.toFixed(2)}dB,asplit[v1][key]`,
      // Counted by its samples and padded: a looped AAC file loses its priming at every loop, so it runs short.
      `[${music}:a]${stereo},asetpts=N/SR/TB,apad,atrim=duration=${seconds.toFixed(4)},volume=${musicGain.toFixed(2)}dB,afade=t=in:d=${Math.min(MUSIC_FADE_IN_SEC, seconds / 2)},afade=t=out:st=${(seconds - fadeOut).toFixed(4)}:d=${fadeOut.toFixed(4)}[bed]`,
      // Keyed on the voice: 20:1 over a threshold of -34 dBFS, so a word at speech level pulls the bed down by 10 dB
      // and more; a release of 400 ms holds it down through the gaps between words.
      '[bed][key]sidechaincompress=threshold=0.02:ratio=20:attack=10:release=400[ducked]',
      `[v1][ducked]amerge=inputs=2,pan=stereo|c0=c0+c2|c1=c1+c3,asplit[mix][m2]`,
    );
  }
  filters.push(
    `[m2]asplit=${TRIALS.length}${TRIALS.map((_, i) => `[t${i}]`).join('')}`,
    ...TRIALS.map((g, i) => `[t${i}]volume=${g}dB,${LIMITER},ebur128@trial${i}=framelog=verbose[r${i}]`),
  );
  const measured = TRIALS.flatMap((_, i) => ['-map', `[r${i}]`, '-f', 'null', '-']);
  return [...args, '-filter_complex', filters.join(';'), '-map', '[mix]', '-c:a', 'pcm_f32le', '-f', 'wav', output, ...measured];
}

/**
 * The gain that brings the limited mix to the target, between the two trials that straddle it; past the trials, the
 * nearest two carry on. Null when the mix is silence.
 */
export function gainToTarget(stderr: string, target: number): number | null {
  const measured = TRIALS.map((gain, i) => ({ gain, loudness: summaryOf(stderr, `ebur128@trial${i}`) }));
  if (!measured.every((m) => audible(m.loudness))) return null;
  const above = measured.findIndex((m) => m.loudness >= target);
  const at = above === -1 ? measured.length - 1 : Math.max(1, above);
  const [a, b] = [measured[at - 1]!, measured[at]!];
  const slope = Math.max(0.1, (b.loudness - a.loudness) / (b.gain - a.gain));
  return a.gain + (target - a.loudness) / slope;
}

/** The filter that lifts the mix by the gain found for it, the limiter after it. */
export function loudnessFilter(gain: number | null): string {
  return gain === null ? 'anull' : `volume=${gain.toFixed(2)}dB,${LIMITER}`;
}

function summaryOf(stderr: string, name: string): Loudness {
  const summary = stderr.lastIndexOf(`[${name} @`);
  const found = summary < 0 ? null : /Summary:\s+Integrated loudness:\s+I:\s+(-?[\d.]+|-inf) LUFS/.exec(stderr.slice(summary));
  if (!found) throw new Error('ffmpeg printed no loudness measurement');
  return found[1] === '-inf' ? -70 : Number(found[1]);
}
