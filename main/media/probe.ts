import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Kind } from '../domain/tasks/model.ts';
import { ffprobePath } from './binaries.ts';

const run = promisify(execFile);

export interface ProbeResult {
  durationSec: number | null;
  video: { codec: string; width: number; height: number; fps: number | null } | null;
  /** `durationSec`: the sound stream's own length, where the container gives one (MP4 and WAV do, WebM does not). */
  audio: { codec: string; sampleRate: number; durationSec: number | null } | null;
}

function ratio(value: string | undefined): number | null {
  const [n, d] = (value ?? '').split('/').map(Number);
  return n && d ? n / d : null;
}

/** What ffprobe finds in a file; throws if ffprobe cannot read it as media. */
export async function probe(path: string, ffprobe = ffprobePath()): Promise<ProbeResult> {
  const { stdout } = await run(ffprobe, ['-v', 'error', '-print_format', 'json', '-show_streams', '-show_format', path]);
  const info = JSON.parse(stdout) as {
    streams?: { codec_type: string; codec_name: string; width?: number; height?: number; avg_frame_rate?: string; sample_rate?: string; duration?: string }[];
    format?: { duration?: string };
  };
  const v = info.streams?.find((s) => s.codec_type === 'video');
  const a = info.streams?.find((s) => s.codec_type === 'audio');
  const duration = Number(info.format?.duration);
  return {
    durationSec: Number.isFinite(duration) ? duration : null,
    video: v ? { codec: v.codec_name, width: v.width ?? 0, height: v.height ?? 0, fps: ratio(v.avg_frame_rate) } : null,
    audio: a ? { codec: a.codec_name, sampleRate: Number(a.sample_rate ?? 0), durationSec: Number.isFinite(Number(a.duration)) ? Number(a.duration) : null } : null,
  };
}

const NEEDS: Record<Exclude<Kind, 'render' | 'draft'>, (p: ProbeResult) => boolean> = {
  image: (p) => !!p.video && p.video.width > 0,
  clip: (p) => !!p.video && (p.durationSec ?? 0) > 0,
  speech: (p) => !!p.audio && (p.durationSec ?? 0) > 0,
};

/** ffprobe itself could not run (missing, not allowed, killed, out of memory): says nothing about the file. */
export class ProbeUnavailable extends Error {}

/**
 * Throws, in words, unless the file is the kind of media the task asked for; ProbeUnavailable when that
 * cannot be told now. Only an ffprobe that ran and exited with an error judges the file.
 */
export async function assertMedia(path: string, kind: Kind): Promise<ProbeResult> {
  let result: ProbeResult;
  try {
    result = await probe(path);
  } catch (err) {
    const e = err as { code?: unknown; signal?: unknown; message?: string };
    if (typeof e.code !== 'number' || e.signal) throw new ProbeUnavailable(`ffprobe could not check the file (${e.message ?? String(err)})`);
    throw new Error(`the provider sent a file that is not readable media (expected ${kind === 'speech' ? 'audio' : `an ${kind}`})`);
  }
  if (kind !== 'render' && kind !== 'draft' && !NEEDS[kind](result)) {
    throw new Error(`the provider sent a file with no ${kind === 'speech' ? 'audio' : 'picture'} in it`);
  }
  return result;
}
