import ffmpeg from 'fluent-ffmpeg';
import type { Fit } from '../domain/frameShape.ts';

export interface RenderScene {
  clip: string;
  narration: string | null;
  /**
   * Seconds this scene fills in the finished video (with fit "narration", all of its narration and a tail). A
   * shorter clip is held on its last frame: a freeze reads as a deliberate hold, where a loop jumps back visibly
   * and a slowed clip changes the motion the creator chose.
   */
  duration: number;
  /** The clip's own sound, at this gain in dB, under the narration; null or absent: the clip's sound is not used. */
  clipSoundDb?: number | null;
}

export interface RenderJob {
  scenes: RenderScene[];
  width: number;
  height: number;
  /** How a clip of another shape fills the frame. */
  fit: Fit;
  fps: number;
  output: string;
}

const SAMPLE_RATE = 48_000;

/**
 * The filters that bring input `from` to exactly w x h, as label [to]: crop fills the frame and cuts what
 * overflows; pad fits it whole with black bars; blur fits it whole over a blurred, cropped copy of itself.
 */
function fitFilters(from: string, to: string, fit: Fit, w: number, h: number): string[] {
  const cover = `scale=${w}:${h}:force_original_aspect_ratio=increase,crop=${w}:${h}`;
  const contain = `scale=${w}:${h}:force_original_aspect_ratio=decrease`;
  if (fit === 'crop') return [`${from}${cover},setsar=1[${to}]`];
  if (fit === 'pad') return [`${from}${contain},pad=${w}:${h}:(ow-iw)/2:(oh-ih)/2,setsar=1[${to}]`];
  return [
    `${from}split[${to}a][${to}b]`,
    `[${to}a]${cover},gblur=sigma=${Math.max(4, Math.round(Math.min(w, h) / 25))}[${to}bg]`,
    `[${to}b]${contain}[${to}fg]`,
    `[${to}bg][${to}fg]overlay=(W-w)/2:(H-h)/2,setsar=1[${to}]`,
  ];
}

/**
 * The one ffmpeg command that assembles a project: every clip brought to one size (by the project's fit) and
 * frame rate and held or cut to its scene's length, each scene's narration laid under it (silence where there is none, padded
 * or cut to the scene) over the creator's own clip's sound when it is kept, the scenes concatenated, H.264/AAC MP4 out.
 */
export function renderCommand(job: RenderJob, ffmpegPath: string): ffmpeg.FfmpegCommand {
  const cmd = ffmpeg().setFfmpegPath(ffmpegPath);
  const filters: string[] = [];
  let input = 0;
  const { width: w, height: h, fps } = job;
  job.scenes.forEach((scene, i) => {
    const d = scene.duration.toFixed(3);
    const clipInput = input;
    cmd.input(scene.clip);
    filters.push(
      ...fitFilters(`[${input++}:v]`, `f${i}`, job.fit, w, h),
      `[f${i}]fps=${fps},tpad=stop_mode=clone:stop_duration=${d},trim=duration=${d},setpts=PTS-STARTPTS[v${i}]`,
    );
    if (scene.narration) {
      cmd.input(scene.narration);
    } else {
      cmd.input(`anullsrc=r=${SAMPLE_RATE}:cl=stereo`).inputFormat('lavfi').inputOptions(['-t', d]);
    }
    const sound = (from: number, to: string, gain = '') => `[${from}:a]aresample=${SAMPLE_RATE},aformat=sample_fmts=fltp:channel_layouts=stereo,${gain}apad,atrim=duration=${d},asetpts=PTS-STARTPTS[${to}]`;
    const withClip = scene.clipSoundDb !== undefined && scene.clipSoundDb !== null;
    filters.push(sound(input++, withClip ? `n${i}` : `a${i}`));
    if (withClip) {
      // Summed, not averaged (amix would halve the narration): the two stereo pairs merged and added channel by channel.
      filters.push(sound(clipInput, `c${i}`, `volume=${scene.clipSoundDb}dB,`), `[n${i}][c${i}]amerge=inputs=2,pan=stereo|c0=c0+c2|c1=c1+c3[a${i}]`);
    }
  });
  const pairs = job.scenes.map((_, i) => `[v${i}][a${i}]`).join('');
  filters.push(`${pairs}concat=n=${job.scenes.length}:v=1:a=1[v][a]`);
  return cmd
    .complexFilter(filters)
    .outputOptions([
      '-map', '[v]', '-map', '[a]',
      '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20', '-pix_fmt', 'yuv420p', '-r', String(fps),
      '-c:a', 'aac', '-b:a', '160k',
      '-movflags', '+faststart',
    ])
    .format('mp4')
    .output(job.output);
}

/** The same command as arguments, for running ffmpeg directly (the benchmark's baseline). */
export function renderArgs(job: RenderJob, ffmpegPath: string): string[] {
  return (renderCommand(job, ffmpegPath) as unknown as { _getArguments(): string[] })._getArguments();
}

function seconds(timemark: string): number {
  const [hh, mm, ss] = timemark.split(':').map(Number);
  return (hh ?? 0) * 3600 + (mm ?? 0) * 60 + (ss ?? 0);
}

export interface RenderRun {
  /** The ffmpeg process id, once it has started. */
  pid: Promise<number>;
  done: Promise<void>;
  kill(): void;
}

/** Runs a render, reporting the seconds written and the fraction done. */
export function runRender(job: RenderJob, ffmpegPath: string, onProgress: (fraction: number, seconds: number) => void): RenderRun {
  const total = job.scenes.reduce((sum, s) => sum + s.duration, 0);
  const cmd = renderCommand(job, ffmpegPath);
  let stderr = '';
  const pid = new Promise<number>((resolve) => cmd.on('start', () => resolve((cmd as unknown as { ffmpegProc: { pid: number } }).ffmpegProc.pid)));
  const done = new Promise<void>((resolve, reject) => {
    cmd
      .on('progress', (p: { timemark?: string }) => {
        const s = seconds(p.timemark ?? '0:0:0');
        onProgress(Math.min(1, s / total), s);
      })
      .on('stderr', (line: string) => {
        stderr = `${stderr}\n${line}`.slice(-2_000);
      })
      .on('error', (err: Error) => reject(new Error(`${err.message}${stderr ? `\n${stderr.trim().split('\n').slice(-5).join('\n')}` : ''}`)))
      .on('end', () => resolve());
  });
  cmd.run();
  return { pid, done, kill: () => cmd.kill('SIGKILL') };
}
