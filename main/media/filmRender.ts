import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { filmTimeline, type FilmTimeline } from '../domain/filmTimeline.ts';
import type { Transition } from '../domain/finishing.ts';
import { cuesWithin, sceneCues, toSrt, type Cue } from '../domain/subtitles.ts';
import { assScript, subtitleStyle, SUBTITLE_FONT_FILE } from './burnedSubtitles.ts';
import { FONT_SHA256 } from './fonts.ts';
import { ChecksumCache } from './checksumCache.ts';
import { FfmpegFailed, runFfmpeg } from './ffmpegRun.ts';
import { chaptersText } from './filmChapters.ts';
import { bodyArgs, crossfadeArgs, type Frame, type ScenePicture } from './scenePieces.ts';
import { SegmentCache } from './segmentCache.ts';
import { gainToTarget, measureArgs, measuredFiles, mixArgs, voiceLoudness, type Loudness, type SceneSound } from './soundtrack.ts';
import { joinArgs, soundArgs } from './filmJoin.ts';
import type { Container } from '../domain/presets.ts';

export interface FilmScene extends SceneSound, Pick<ScenePicture, 'still' | 'trim'> {
  id: string;
  /** The narration's words, for its subtitles; null for a scene without narration. */
  text: string | null;
  /** The narration's measured length. */
  spoken: number | null;
  /** Seconds the scene fills, its transitions included. */
  seconds: number;
  /** The cut from this scene to the next. */
  transition: Transition;
}

export interface FilmJob {
  frame: Frame;
  scenes: FilmScene[];
  burnSubtitles: boolean;
  music: { path: string; volume: number } | null;
  loudness: number;
  /** Where the project's pieces are kept between renders. */
  segments: string;
  /** This render's own scratch folder, removed by the caller. */
  work: string;
  /** Names this render's half-written pieces, so a crash's are found: unique to the task. */
  owner: string;
  fontsDir: string;
  /** The film's format: MP4 unless an export asks for WebM or a GIF. */
  container: Container;
  /** Seconds of the film kept from its start (a GIF preview); all of it when absent. */
  seconds?: number;
  output: string;
}

export interface FilmHooks {
  ffmpeg: string;
  signal?: AbortSignal;
  /** Each ffmpeg started, with a path its command line holds, so a crash can stop it. */
  onStart?: (pid: number, holds: string) => void;
  onProgress?: (fraction: number) => void;
  /** Asked before each ffmpeg starts; false stops the render there (its worker no longer holds it). */
  mayRun?: () => Promise<boolean>;
  /** Every ffmpeg command run, in order: the benchmark runs the same work directly. */
  commands?: string[][];
}

export interface FilmRendered {
  timeline: FilmTimeline;
  cues: Cue[];
  /** Piece keys made and reused. */
  made: string[];
  reused: string[];
  /** Whether the sound was mixed and encoded anew, rather than found as it was. */
  soundMade: boolean;
}

interface Piece {
  key: string;
  /** The film's frames it covers. */
  from: number;
  to: number;
  args: (output: string, burn: { ass: string; fontsDir: string } | null) => string[];
}

/** Bumped when the way a piece, or the sound, is made changes, so what was made the old way is not reused. */
const PIECE_VERSION = 1;
const SOUND_VERSION = 1;

const inputSums = new ChecksumCache();

const encoders = new Map<string, Promise<string>>();

/**
 * The ffmpeg build, by its version line: a piece is joined with others as it is only if they were encoded alike, so
 * pieces another build made (another machine's, in a team) are made again rather than joined.
 */
function encoderOf(ffmpeg: string): Promise<string> {
  let known = encoders.get(ffmpeg);
  if (!known) {
    known = new Promise((resolve) => execFile(ffmpeg, ['-version'], (err, stdout) => resolve(err ? ffmpeg : String(stdout).split('\n')[0]!.trim())));
    encoders.set(ffmpeg, known);
  }
  return known;
}

/**
 * The subtitle font must be the one the studio ships: libass puts another font in the place of a missing or damaged
 * one, or none at all on a machine without fonts, and the subtitles would silently not be burned.
 */
async function checkFont(font: string): Promise<void> {
  if (!existsSync(font)) throw new Error(`the subtitle font ${font} is missing; install the studio again to bring it back`);
  if ((await inputSums.of(font)) !== FONT_SHA256) throw new Error(`the subtitle font ${font} is damaged (its checksum is not the one the studio ships); install the studio again to bring it back`);
}

/** The film's cues: each scene's narration from where it starts in the film, cut where the scene ends. */
function filmCues(job: FilmJob, timeline: FilmTimeline): Cue[] {
  const { lineMax } = subtitleStyle(job.frame.width, job.frame.height);
  return job.scenes.flatMap((s, i) => {
    const span = timeline.spans[i]!;
    if (!s.text || s.spoken === null || !s.narration) return [];
    return sceneCues(s.text, span.start / timeline.fps + s.narrationAt, s.spoken, (span.start + span.frames) / timeline.fps, lineMax);
  });
}

async function pieces(job: FilmJob, timeline: FilmTimeline, cues: Cue[], encoder: string): Promise<Piece[]> {
  const { frame } = job;
  const pictures: (ScenePicture & { sha: string })[] = [];
  for (const [i, s] of job.scenes.entries()) {
    const span = timeline.spans[i]!;
    const moved = { ...(s.still ? { still: s.still } : {}), ...(s.trim ? { trim: s.trim } : {}) };
    pictures.push({ clip: s.clip, frames: span.frames, fadeIn: span.fadeIn, fadeOut: span.fadeOut, ...moved, sha: await inputSums.of(s.clip) });
  }
  const shape = (p: ScenePicture & { sha: string }) => ({ sha: p.sha, frames: p.frames, fadeIn: p.fadeIn, fadeOut: p.fadeOut, still: p.still, trim: p.trim });
  const burned = (from: number, to: number) => (job.burnSubtitles ? cuesWithin(cues, from / frame.fps, to / frame.fps) : null);
  const out: Piece[] = [];
  timeline.spans.forEach((span, i) => {
    const a = pictures[i]!;
    const [from, to] = [span.head, span.frames - span.tail];
    if (to > from) {
      const key = SegmentCache.key({ v: PIECE_VERSION, encoder, frame, scene: shape(a), from, to, burn: burned(span.start + from, span.start + to) });
      out.push({ key, from: span.start + from, to: span.start + to, args: (o, burn) => bodyArgs(frame, a, from, to, burn, o) });
    }
    const next = timeline.spans[i + 1];
    if (span.tail > 0 && next) {
      const b = pictures[i + 1]!;
      const at = next.start;
      const key = SegmentCache.key({ v: PIECE_VERSION, encoder, frame, a: shape(a), b: shape(b), frames: span.tail, burn: burned(at, at + span.tail) });
      out.push({ key, from: at, to: at + span.tail, args: (o, burn) => crossfadeArgs(frame, a, b, span.tail, burn, o) });
    }
  });
  return out;
}

const listLine = (path: string) => `file '${path.replace(/'/g, "'\\''")}'`;

/**
 * Renders the film: every piece not already whole in the cache, then the sound, then the pieces joined as they
 * are with the sound, the subtitles as a soft track and the scenes as chapters, into `output`.
 */
export async function renderFilm(job: FilmJob, hooks: FilmHooks): Promise<FilmRendered> {
  const cache = new SegmentCache(job.segments);
  try {
    return await rendered(job, hooks, cache);
  } catch (err) {
    // A piece half-written when ffmpeg failed or was stopped is no piece: the next render must not find it.
    await cache.clearParts(job.owner);
    throw err;
  }
}

async function rendered(job: FilmJob, hooks: FilmHooks, cache: SegmentCache): Promise<FilmRendered> {
  if (job.burnSubtitles) await checkFont(join(job.fontsDir, SUBTITLE_FONT_FILE));
  const timeline = filmTimeline(job.scenes.map((s) => s.seconds), job.scenes.map((s) => s.transition), job.frame.fps);
  const cues = filmCues(job, timeline);
  await mkdir(job.segments, { recursive: true });
  await mkdir(job.work, { recursive: true });
  // A preview of the first seconds needs only the pieces they show.
  const encoder = await encoderOf(hooks.ffmpeg);
  const planned = (await pieces(job, timeline, cues, encoder)).filter((p) => job.seconds === undefined || p.from < job.seconds * job.frame.fps);
  const found = new Map<string, string>();
  for (const p of planned) {
    const whole = await cache.whole(p.key);
    if (whole) found.set(p.key, whole);
  }
  const toMake = planned.filter((p) => !found.has(p.key));
  // Progress: each frame a piece encodes counts one; the sound and the joining, a quarter of the film's frames.
  const total = toMake.reduce((n, p) => n + p.to - p.from, 0) + timeline.frames / 4;
  let done = 0;
  const report = (frames: number) => hooks.onProgress?.(Math.min(1, (done + frames) / total));
  const run = async (args: string[], holds: string, frames = 0): Promise<string> => {
    if (hooks.mayRun && !(await hooks.mayRun())) throw new FfmpegFailed('stopped: this worker no longer holds the render');
    hooks.commands?.push(args);
    const stderr = await runFfmpeg(hooks.ffmpeg, args, {
      signal: hooks.signal,
      onStart: (pid) => hooks.onStart?.(pid, holds),
      onSeconds: (s) => report(Math.min(frames, s * job.frame.fps)),
    });
    done += frames;
    report(0);
    return stderr;
  };

  const made: string[] = [];
  for (const p of toMake) {
    const part = cache.part(p.key, job.owner);
    let burn = null;
    if (job.burnSubtitles) {
      const ass = join(job.work, `${p.key}.ass`);
      await writeFile(ass, assScript(cuesWithin(cues, p.from / job.frame.fps, p.to / job.frame.fps), job.frame.width, job.frame.height));
      burn = { ass, fontsDir: job.fontsDir };
    }
    await run(p.args(part, burn), part, p.to - p.from);
    found.set(p.key, await cache.keep(p.key, part));
    made.push(p.key);
  }

  const seconds = Math.min(timeline.frames / timeline.fps, job.seconds ?? Infinity);
  const used = new Set(planned.map((p) => p.key));
  const { sound, gain, key, made: soundMade } = await filmSound(job, timeline, cache, run, encoder);
  if (key) used.add(key);
  const list = join(job.work, 'pieces.txt');
  await writeFile(list, planned.map((p) => listLine(found.get(p.key)!)).join('\n') + '\n');
  const chapters = join(job.work, 'chapters.txt');
  await writeFile(chapters, chaptersText(job.scenes.map((s) => s.id), timeline));
  const srt = cues.length > 0 && job.container !== 'gif' ? join(job.work, 'film.srt') : null;
  if (srt) await writeFile(srt, toSrt(cues));
  await run(joinArgs({ container: job.container, list, sound, gain, chapters, srt, seconds, output: job.output }), job.output, timeline.frames / 8);
  await cache.prune(used, Date.now());
  return { timeline, cues, made, reused: planned.filter((p) => !made.includes(p.key)).map((p) => p.key), soundMade };
}

/**
 * The film's sound as the join takes it. MP4: encoded once as AAC at its loudness and kept by what it is made of
 * (soundKey), so a film whose sound did not change finds it; WebM: the mix as WAV with its gain, encoded at the join
 * as Opus; GIF: none.
 */
async function filmSound(job: FilmJob, timeline: FilmTimeline, cache: SegmentCache, run: Run, encoder: string): Promise<{ sound: string | null; gain: number | null; key: string | null; made: boolean }> {
  if (job.container === 'gif') return { sound: null, gain: null, key: null, made: false };
  const mix = join(job.work, 'mix.wav');
  if (job.container === 'webm') return { sound: mix, gain: await mixed(job, timeline, cache, run, mix), key: null, made: true };
  const key = await soundKey(job, timeline, encoder);
  const kept = await cache.whole(key, 'm4a');
  if (kept) return { sound: kept, gain: null, key, made: false };
  const part = cache.part(key, job.owner, 'm4a');
  await run(soundArgs(mix, await mixed(job, timeline, cache, run, mix), part), part);
  return { sound: await cache.keep(key, part, 'm4a'), gain: null, key, made: true };
}

/**
 * Everything the film's sound is made of: each scene's narration and kept clip sound (by checksum) and where they
 * sit, the cuts' fades and overlaps, the music and its level, the loudness. A take that changes only the picture
 * leaves it as it was, so the sound is found and not mixed and encoded again.
 */
async function soundKey(job: FilmJob, timeline: FilmTimeline, encoder: string): Promise<string> {
  const sum = (path: string | null) => (path ? inputSums.of(path) : null);
  const scenes = [];
  for (const [i, s] of job.scenes.entries()) {
    const { frames, head, fadeIn, fadeOut } = timeline.spans[i]!;
    const clip = s.clipSoundDb === null ? null : { sha: await sum(s.clip), db: s.clipSoundDb, trim: s.trim ?? null };
    scenes.push({ narration: await sum(s.narration), at: s.narrationAt, clip, frames, head, fadeIn, fadeOut });
  }
  const music = job.music && { sha: await sum(job.music.path), volume: job.music.volume };
  return SegmentCache.key({ v: SOUND_VERSION, encoder, fps: timeline.fps, scenes, music, loudness: job.loudness });
}

/** The film's sound mixed into `output`, and the gain that brings it to the loudness asked (see soundtrack.ts). */
async function mixed(job: FilmJob, timeline: FilmTimeline, cache: SegmentCache, run: Run, output: string): Promise<number | null> {
  const sounds = [...new Set([...job.scenes.flatMap((s) => [...(s.narration ? [s.narration] : []), ...(s.clipSoundDb === null ? [] : [s.clip])]), ...(job.music ? [job.music.path] : [])])];
  const loudness = await loudnessOf(sounds, cache, run);
  const voice = voiceLoudness(
    job.scenes.flatMap((s, i) => [
      ...(s.narration && s.spoken ? [{ loudness: loudness.get(s.narration)!, seconds: s.spoken }] : []),
      ...(s.clipSoundDb === null ? [] : [{ loudness: loudness.get(s.clip)! + s.clipSoundDb, seconds: timeline.spans[i]!.frames / timeline.fps }]),
    ]),
  );
  const bed = job.music && { path: job.music.path, volume: job.music.volume, loudness: loudness.get(job.music.path)! };
  return gainToTarget(await run(mixArgs(job.scenes, timeline, voice, bed, job.loudness, output), output, timeline.frames / 8), job.loudness);
}

type Run = (args: string[], holds: string, frames?: number) => Promise<string>;

/**
 * The loudness of each sound file, measured once per file (by its checksum) and kept beside the pieces: those not
 * measured before are measured together, in one run.
 */
async function loudnessOf(paths: readonly string[], cache: SegmentCache, run: Run): Promise<Map<string, Loudness>> {
  const found = new Map<string, Loudness>();
  const kept = new Map<string, string>();
  for (const path of paths) {
    const name = `${await inputSums.of(path)}.loudness`;
    // Only a number is a measurement: a note cut short by a crash or a full disk is measured again.
    const known = await cache.read(name);
    if (known !== null && /^-?\d+(\.\d+)?$/.test(known)) found.set(path, Number(known));
    else kept.set(path, name);
  }
  const missing = [...kept.keys()];
  if (missing.length === 0) return found;
  const measured = measuredFiles(await run(measureArgs(missing), missing[0]!), missing.length);
  for (const [i, path] of missing.entries()) {
    found.set(path, measured[i]!);
    await cache.write(kept.get(path)!, String(measured[i]));
  }
  return found;
}
