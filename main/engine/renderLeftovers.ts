import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * What a render leaves while it works, and what a crash or a cancel can leave behind: the note of the ffmpeg it runs
 * (`render-N.pid`), its scratch folder and half-written film in `renders/` (`render-N-<hex>.work`, `.part.*`), and
 * its half-written pieces and sound in `segments/` (`<key>.render-N-<hex>.part.mp4`, `.part.m4a`).
 */
export interface RenderFolders {
  renders: string;
  segments: string;
}

/** The command line of a process, to be sure a pid still names the ffmpeg we started. */
function commandLine(pid: number): string {
  try {
    if (existsSync(`/proc/${pid}/cmdline`)) return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return execFileSync('ps', ['-o', 'command=', '-p', String(pid)], { encoding: 'utf8' });
  } catch {
    return '';
  }
}

const pidFile = (folders: RenderFolders, taskId: number) => join(folders.renders, `render-${taskId}.pid`);

/** The ffmpeg a render last started, as its note says; null when there is none or it was cut short by a crash. */
function noted(folders: RenderFolders, taskId: number): { pid: number; temp: string } | null {
  try {
    const note = JSON.parse(readFileSync(pidFile(folders, taskId), 'utf8')) as { pid?: unknown; temp?: unknown };
    return typeof note.pid === 'number' && typeof note.temp === 'string' ? { pid: note.pid, temp: note.temp } : null;
  } catch {
    return null;
  }
}

/** Notes the ffmpeg a render starts, written before it does any work, so a crash at any moment finds it. */
export function noteFfmpeg(folders: RenderFolders, taskId: number, pid: number, temp: string): void {
  writeFileSync(pidFile(folders, taskId), JSON.stringify({ pid, temp }));
}

/** Removes the note only if it is still of `pid`: a worker that slept past its lease must not remove its successor's. */
export async function forgetFfmpeg(folders: RenderFolders, taskId: number, pid: number | null): Promise<void> {
  if (pid !== null && noted(folders, taskId)?.pid === pid) await rm(pidFile(folders, taskId), { force: true });
}

/**
 * A worker killed mid-render leaves its ffmpeg running (children outlive a SIGKILLed parent) and partial files
 * behind. That ffmpeg is stopped (only if its command line still names the file it was writing: a pid is reused)
 * and every partial file of the render removed.
 */
export async function clearAttempt(folders: RenderFolders, taskId: number): Promise<void> {
  const note = noted(folders, taskId);
  if (note && commandLine(note.pid).includes(note.temp)) {
    try {
      process.kill(note.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  await rm(pidFile(folders, taskId), { force: true });
  for (const f of existsSync(folders.renders) ? await readdir(folders.renders) : []) {
    if (f.startsWith(`render-${taskId}-`) && (f.includes('.part.') || f.endsWith('.work'))) await rm(join(folders.renders, f), { recursive: true, force: true });
  }
  for (const f of existsSync(folders.segments) ? await readdir(folders.segments) : []) {
    if (f.includes(`.render-${taskId}-`) && f.includes('.part.')) await rm(join(folders.segments, f), { force: true });
  }
}

/**
 * Clears what other renders of the project left that will never run again (`done` says which: cancelled while
 * their worker was dead, say), so their ffmpeg does not run on and their scratch files do not stay for good.
 */
export async function clearOthers(folders: RenderFolders, taskId: number, done: (taskId: number) => Promise<boolean>): Promise<void> {
  const names = existsSync(folders.renders) ? await readdir(folders.renders) : [];
  const ids = new Set(names.flatMap((f) => /^render-(\d+)(?:\.pid|-[0-9a-f]+\.(?:work|part\..+))$/.exec(f)?.[1] ?? []).map(Number));
  for (const id of ids) if (id !== taskId && (await done(id))) await clearAttempt(folders, id);
}
