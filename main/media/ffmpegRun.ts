import { spawn } from 'node:child_process';

export interface FfmpegRun {
  /** Called with the process id once it has started, so a crash can find and stop it. */
  onStart?: (pid: number) => void;
  /** Seconds of output written so far, as ffmpeg reports them. */
  onSeconds?: (seconds: number) => void;
  signal?: AbortSignal;
}

export class FfmpegFailed extends Error {}

/**
 * Runs ffmpeg with these arguments and resolves with what it wrote to stderr (where ebur128 prints its
 * measurement). It is killed when the signal aborts. Progress comes from `-progress pipe:1`, added here.
 */
export function runFfmpeg(ffmpeg: string, args: readonly string[], run: FfmpegRun = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    if (run.signal?.aborted) return reject(new FfmpegFailed('stopped before it started'));
    const child = spawn(ffmpeg, ['-hide_banner', '-nostdin', '-y', '-progress', 'pipe:1', '-nostats', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let progress = '';
    const kill = () => child.kill('SIGKILL');
    run.signal?.addEventListener('abort', kill);
    if (child.pid !== undefined) run.onStart?.(child.pid);
    child.stdout.on('data', (chunk: Buffer) => {
      progress = (progress + chunk.toString()).slice(-4_000);
      const times = [...progress.matchAll(/out_time_ms=(\d+)/g)];
      const last = times.at(-1);
      if (last) run.onSeconds?.(Number(last[1]) / 1e6);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-64_000);
    });
    child.on('error', (err) => {
      run.signal?.removeEventListener('abort', kill);
      reject(new FfmpegFailed(`ffmpeg could not start (${err.message})`));
    });
    child.on('close', (code, sig) => {
      run.signal?.removeEventListener('abort', kill);
      if (code === 0) return resolve(stderr);
      const tail = stderr.trim().split('\n').slice(-5).join('\n');
      // The cause, when ffmpeg named one, first: its last lines are often only a summary.
      const cause = /^.*(No space left on device|Permission denied|No such file or directory|Invalid data found).*$/m.exec(stderr)?.[0];
      reject(new FfmpegFailed(sig ? `ffmpeg was stopped (${sig})` : `ffmpeg exited ${code}${cause ? `: ${cause.trim()}` : ''}${tail ? `\n${tail}` : ''}`));
    });
  });
}
