import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { clearAttempt, clearOthers, forgetFfmpeg, noteFfmpeg } from './renderLeftovers.ts';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { sha256File } from '../media/checksum.ts';
import { dataFolderMedia, type MediaFolder } from '../media/mediaFolder.ts';
import { OutputLocator } from './outputLocator.ts';
import type { ImportedRef } from './outputRefs.ts';
import { probe } from '../media/probe.ts';
import { renderFilm, type FilmJob, type FilmScene } from '../media/filmRender.ts';
import { FONTS_DIR } from '../media/fonts.ts';
import { subtitlesBeside } from '../media/filmFiles.ts';
import { outsideAsar } from '../media/binaries.ts';
import type { Clock } from '../domain/ports.ts';
import { OWN_CLIP_UNDER_NARRATION_DB, ownClipSceneLength, sceneLength, type SceneFit } from '../domain/sceneLength.ts';
import { narrationMargins } from '../domain/filmTimeline.ts';
import { CUT, DEFAULT_LOUDNESS_LUFS, type Motion, type Subtitles, type Transition, type Trim } from '../domain/finishing.ts';
import { toSrt, toVtt } from '../domain/subtitles.ts';
import { exportName, type Container, type Preset } from '../domain/presets.ts';
import type { Fit } from '../domain/frameShape.ts';
import type { Task } from '../domain/tasks/model.ts';
import type { TaskStore } from '../store/port.ts';

export interface RenderPorts {
  repo: Pick<TaskStore, 'get' | 'outputs' | 'saveProgress' | 'complete' | 'fail'>;
  clock: Clock;
  dataDir: string;
  /** Where renders are saved and their clips found; without it, the data folder as the studio always used it. */
  media?: MediaFolder;
  ffmpegPath: string;
  ffprobePath: string;
  log: (message: string) => void;
  /** Each ffmpeg command run is added here, and the render's scratch folder kept: the benchmark runs the same work directly. */
  commands?: string[][];
}

/** A task's output, or the creator's own file (copied into the project, with its checksum). */
type Source = { $output: number } | ImportedRef;

/**
 * A scene as the render reads it. Fields absent on renders planned before they existed: `fit` (fitted to the
 * narration, the default), `ownClip` (the creator's own clip was cut and left silent), `text` and `transition` (no
 * subtitles, plain cuts), `still` and `trim`.
 */
interface RenderScene {
  id?: string;
  duration: number;
  fit?: SceneFit;
  /** The scene's clip, or with `still`, its still. */
  clip: Source;
  narration: { $output: number } | null;
  /** The creator's own clip, rendered whole with its sound. */
  ownClip?: true;
  text?: string | null;
  transition?: Transition;
  /** The scene shows its still with this move. */
  still?: Motion;
  /** The part of its clip it shows. */
  trim?: Trim;
}

interface RenderInput {
  width: number;
  height: number;
  /** Absent from renders planned before projects had a fit, which padded. */
  fit?: Fit;
  fps: number;
  scenes: RenderScene[];
  subtitles?: Subtitles;
  music?: { sound: Source; volume: number };
  loudness?: number;
  /** An export (presets.ts): its preset, the project's name for its file, its format and the seconds a preview keeps. */
  preset?: Preset;
  title?: string;
  container?: Container;
  seconds?: number;
}

const CONTENT_TYPES: Record<Container, string> = { mp4: 'video/mp4', webm: 'video/webm', gif: 'image/gif' };

/** Progress is written at most this often, and at least once a second while ffmpeg reports. */
const PROGRESS_EVERY_MS = 500;

/** An error in plain words, a full disk named as one, with the folder the film is made in. */
function spaceWords(err: unknown, folder: string): string {
  const message = (err as Error).message;
  if ((err as NodeJS.ErrnoException).code === 'ENOSPC' || /No space left on device/.test(message)) return `the disk holding ${folder} is full; free some space, then render again`;
  return message;
}

/** The real length of a scene's narration, as ffprobe reads the file the provider sent. */
async function spokenSeconds(path: string, ffprobe: string, index: number): Promise<number> {
  const seconds = (await probe(path, ffprobe).catch(() => null))?.durationSec;
  if (!seconds) throw new Error(`scene ${index + 1}'s narration could not be measured (ffprobe read no length from ${path})`);
  return seconds;
}

/** The length of the creator's own clip (the part its trim keeps) and whether it has sound, as ffprobe reads the project's copy. */
async function ownClipFound(path: string, ffprobe: string, index: number, trim?: Trim): Promise<{ seconds: number; sound: boolean }> {
  const found = await probe(path, ffprobe).catch(() => null);
  if (!found?.durationSec) throw new Error(`scene ${index + 1}'s own clip could not be measured (ffprobe read no length from ${path})`);
  const kept = trim ? Math.min(trim.out ?? found.durationSec, found.durationSec) - trim.in : found.durationSec;
  if (kept <= 0) throw new Error(`scene ${index + 1}'s trim starts at ${trim!.in} s, past the end of its own clip (${found.durationSec.toFixed(1)} s); change "trim"`);
  return { seconds: kept, sound: found.audio !== null };
}

/**
 * The local render: no money is at stake, so a crash simply runs it again. Exactly one runs at a time (the
 * claim's concurrency for renders is 1). The lease is kept by the heartbeat, since ffmpeg has no poll loop;
 * progress goes on the row; the output is written to a temporary file and renamed once ffprobe confirms it.
 */
export async function runRenderTask(task: Task, ports: RenderPorts, options: { owner: string; leaseMs: number }, signal: AbortSignal) {
  const { repo, clock } = ports;
  const lease = () => ({ owner: options.owner, now: clock.now() });
  const media = ports.media ?? dataFolderMedia(ports.dataDir, hostname());
  const project = join(media.base, 'projects', String(task.projectId));
  const dir = join(project, 'renders');
  const segments = join(project, 'segments');
  const folders = { renders: dir, segments };
  try {
    await mkdir(dir, { recursive: true });
    await clearAttempt(folders, task.id);
    await clearOthers(folders, task.id, async (id) => (await repo.get(id))?.status !== 'RUNNING');
  } catch (err) {
    await repo.fail(task.id, `the render cannot start: ${spaceWords(err, media.base)}`, 'no', lease());
    return;
  }

  const input = task.input as RenderInput;
  const name = `render-${task.id}-${randomBytes(4).toString('hex')}`;
  const container = input.container ?? 'mp4';
  let job: FilmJob;
  try {
    const files = new OutputLocator(repo, media);
    const cuts = input.scenes.map((s) => s.transition ?? CUT);
    // Each scene's files found and measured at once: ffprobe's start-up, not its reading, is most of the time.
    const scenes: FilmScene[] = await Promise.all(
      input.scenes.map(async (s, i) => {
        const narration = s.narration ? await files.input(s.narration.$output, `scene ${i + 1}'s narration`) : null;
        const spoken = narration ? await spokenSeconds(narration, ports.ffprobePath, i) : null;
        const noun = s.still ? 'still' : 'clip';
        const clip = '$file' in s.clip ? await files.imported(s.clip, `scene ${i + 1}'s own ${noun}`) : await files.input(s.clip.$output, `scene ${i + 1}'s ${noun}`);
        const own = s.ownClip ? await ownClipFound(clip, ports.ffprobePath, i, s.trim) : null;
        // The narration starts once the transition into the scene is over and ends before the one out of it begins.
        const margins = narrationMargins(cuts, i);
        const margin = margins.before + margins.after;
        const fit = s.fit ?? 'narration';
        return {
          id: s.id ?? `scene-${i + 1}`,
          seconds: own ? ownClipSceneLength(s.duration, own.seconds, spoken, fit, margin) : sceneLength(s.duration, spoken, fit, margin),
          clip,
          narration,
          narrationAt: margins.before,
          clipSoundDb: own?.sound ? (narration ? OWN_CLIP_UNDER_NARRATION_DB : 0) : null,
          text: s.text ?? null,
          spoken,
          transition: cuts[i]!,
          ...(s.still ? { still: s.still } : {}),
          ...(s.trim ? { trim: s.trim } : {}),
        };
      }),
    );
    const music = input.music && ('$file' in input.music.sound ? await files.imported(input.music.sound, 'the music') : await files.input(input.music.sound.$output, 'the music'));
    job = {
      frame: { width: input.width, height: input.height, fit: input.fit ?? 'pad', fps: input.fps },
      scenes,
      burnSubtitles: input.subtitles?.burn ?? false,
      music: music ? { path: music, volume: input.music!.volume } : null,
      loudness: input.loudness ?? DEFAULT_LOUDNESS_LUFS,
      segments,
      work: join(dir, `${name}.work`),
      owner: name,
      fontsDir: outsideAsar(FONTS_DIR),
      container,
      ...(input.seconds ? { seconds: input.seconds } : {}),
      output: join(dir, `${name}.part.${container}`),
    };
  } catch (err) {
    await repo.fail(task.id, `the render cannot start: ${(err as Error).message}`, 'no', lease());
    return;
  }

  let lastSave = 0;
  let saving = false;
  const stop = new AbortController();
  const onProgress = (fraction: number) => {
    if (saving || clock.now() - lastSave < PROGRESS_EVERY_MS) return;
    lastSave = clock.now();
    saving = true;
    // A row that was cancelled or taken over refuses the write: stop ffmpeg at once. A write that fails is
    // tried again with the next progress; the heartbeat keeps the lease meanwhile.
    repo
      .saveProgress(task.id, fraction, options.leaseMs, lease())
      .then(
        (kept) => {
          if (!kept) stop.abort();
        },
        () => undefined,
      )
      .finally(() => (saving = false));
  };
  let started: number | null = null;
  const onStart = (pid: number, holds: string) => {
    started = pid;
    noteFfmpeg(folders, task.id, pid, holds);
  };
  // A worker that slept past its lease starts no more ffmpeg for a render another worker now holds.
  const mayRun = async () => !stop.signal.aborted && (await repo.get(task.id))?.leaseOwner === options.owner;
  const onAbort = () => stop.abort();
  signal.addEventListener('abort', onAbort);
  let film;
  try {
    film = await renderFilm(job, { ffmpeg: ports.ffmpegPath, signal: stop.signal, onStart, onProgress, mayRun, commands: ports.commands });
  } catch (err) {
    await rm(job.output, { force: true });
    if (!signal.aborted && !stop.signal.aborted && (await repo.get(task.id))?.leaseOwner === options.owner) {
      await repo.fail(task.id, `the render failed: ${spaceWords(err, media.base)}`, 'no', lease());
    }
    return;
  } finally {
    signal.removeEventListener('abort', onAbort);
    await forgetFfmpeg(folders, task.id, started);
    if (!ports.commands) await rm(job.work, { recursive: true, force: true });
  }

  const expected = Math.min(film.timeline.frames / job.frame.fps, job.seconds ?? Infinity);
  const result = await probe(job.output, ports.ffprobePath).catch(() => null);
  const off = (seconds: number | null | undefined, slack: number) => Math.abs((seconds ?? 0) - expected) > slack;
  const frameOff = (seconds: number | null | undefined) => off(seconds, 1.5 / job.frame.fps);
  // The sound as long as the picture too, where the container says (to an AAC frame or so): a short one cuts the last words.
  const sound = container === 'gif' || (result?.audio && (result.audio.durationSec === null || !off(result.audio.durationSec, Math.max(1.5 / job.frame.fps, 0.1))));
  if (!result?.video || !sound || frameOff(result.durationSec)) {
    await rm(job.output, { force: true });
    await repo.fail(task.id, `the render came out wrong (expected ${expected.toFixed(3)} s with picture${container === 'gif' ? '' : ' and sound'}); it was not kept`, 'no', lease());
    return;
  }
  // An export is named after the project and its preset, in a folder of its own so no export is put over another.
  const final = input.preset ? join(dir, `render-${task.id}`, exportName(input.title ?? 'film', input.preset, container)) : join(dir, `render-${task.id}.mp4`);
  // The subtitles beside the film, in place before it: a film found in place always has them.
  const beside = subtitlesBeside(final);
  let output;
  try {
    await mkdir(dirname(final), { recursive: true });
    await writeFile(beside.srt, toSrt(film.cues));
    await writeFile(beside.vtt, toVtt(film.cues));
    await rename(job.output, final);
    output = { path: media.stored(final), sha256: await sha256File(final), bytes: (await stat(final)).size, contentType: CONTENT_TYPES[container] };
  } catch (err) {
    await Promise.all([job.output, beside.srt, beside.vtt].map((f) => rm(f, { force: true })));
    await repo.fail(task.id, `the render could not be saved: ${spaceWords(err, media.base)}`, 'no', lease());
    return;
  }
  if (await repo.complete(task.id, { outputs: [output], costActual: 0, costSource: 'made on this machine by ffmpeg, at no charge' }, lease())) return;
  // Cancelled as ffmpeg finished: a film nobody will be shown is not left behind (a render costs nothing to make again).
  if ((await repo.get(task.id))?.status === 'CANCELLED') {
    await Promise.all([final, beside.srt, beside.vtt].map((f) => rm(f, { force: true })));
    if (input.preset) await rm(dirname(final), { recursive: true, force: true });
    ports.log(`task ${task.id}: cancelled as the render finished; its film was removed`);
    return;
  }
  ports.log(`task ${task.id}: lease lost before completing the render; the file is at ${final}`);
}
