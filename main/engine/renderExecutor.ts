import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { sha256File } from '../media/checksum.ts';
import { dataFolderMedia, type MediaFolder } from '../media/mediaFolder.ts';
import { OutputLocator } from './outputLocator.ts';
import type { ImportedRef } from './outputRefs.ts';
import { probe } from '../media/probe.ts';
import { runRender, type RenderJob } from '../media/renderer.ts';
import type { Clock } from '../domain/ports.ts';
import { OWN_CLIP_UNDER_NARRATION_DB, ownClipSceneLength, sceneLength, type SceneFit } from '../domain/sceneLength.ts';
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
}

interface RenderInput {
  width: number;
  height: number;
  /** Absent from renders planned before projects had a fit, which padded. */
  fit?: Fit;
  fps: number;
  /** `fit` absent on renders planned before scenes had one: fitted to the narration, the default. */
  /** A clip is a task's output, or the creator's own (copied into the project, with its checksum). */
  /** `ownClip`: the creator's own clip, rendered whole with its sound; absent on renders planned before, which cut it and left it silent. */
  scenes: { duration: number; fit?: SceneFit; clip: { $output: number } | ImportedRef; narration: { $output: number } | null; ownClip?: true }[];
}

/** Progress is written at most this often, and at least once a second while ffmpeg reports. */
const PROGRESS_EVERY_MS = 500;

/** The command line of a process, to be sure a pid still names the ffmpeg we started. */
function commandLine(pid: number): string {
  try {
    if (existsSync(`/proc/${pid}/cmdline`)) return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return execFileSync('ps', ['-o', 'command=', '-p', String(pid)], { encoding: 'utf8' });
  } catch {
    return '';
  }
}

/**
 * A worker killed mid-render leaves its ffmpeg running (children outlive a SIGKILLed parent) and a partial
 * file behind. Before a render starts again, that ffmpeg is stopped and every partial file removed.
 */
async function clearEarlierAttempt(dir: string, taskId: number): Promise<void> {
  const pidFile = join(dir, `render-${taskId}.pid`);
  if (existsSync(pidFile)) {
    const { pid, temp } = JSON.parse(readFileSync(pidFile, 'utf8')) as { pid: number; temp: string };
    if (commandLine(pid).includes(temp)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    await rm(pidFile, { force: true });
  }
  for (const f of await readdir(dir)) {
    if (f.startsWith(`render-${taskId}-`) && f.endsWith('.part.mp4')) await rm(join(dir, f), { force: true });
  }
}

/** The real length of a scene's narration, as ffprobe reads the file the provider sent. */
async function spokenSeconds(path: string, ffprobe: string, index: number): Promise<number> {
  const seconds = (await probe(path, ffprobe).catch(() => null))?.durationSec;
  if (!seconds) throw new Error(`scene ${index + 1}'s narration could not be measured (ffprobe read no length from ${path})`);
  return seconds;
}

/** The length of the creator's own clip and whether it has sound, as ffprobe reads the project's copy. */
async function ownClipFound(path: string, ffprobe: string, index: number): Promise<{ seconds: number; sound: boolean }> {
  const found = await probe(path, ffprobe).catch(() => null);
  if (!found?.durationSec) throw new Error(`scene ${index + 1}'s own clip could not be measured (ffprobe read no length from ${path})`);
  return { seconds: found.durationSec, sound: found.audio !== null };
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
  const dir = join(media.base, 'projects', String(task.projectId), 'renders');
  await mkdir(dir, { recursive: true });
  await clearEarlierAttempt(dir, task.id);

  const input = task.input as RenderInput;
  let job: RenderJob;
  try {
    const files = new OutputLocator(repo, media);
    const scenes: RenderJob['scenes'] = [];
    for (const [i, s] of input.scenes.entries()) {
      const narration = s.narration ? await files.input(s.narration.$output, `scene ${i + 1}'s narration`) : null;
      const spoken = narration ? await spokenSeconds(narration, ports.ffprobePath, i) : null;
      const clip = '$file' in s.clip ? await files.imported(s.clip, `scene ${i + 1}'s own clip`) : await files.input(s.clip.$output, `scene ${i + 1}'s clip`);
      const own = s.ownClip ? await ownClipFound(clip, ports.ffprobePath, i) : null;
      scenes.push({
        duration: own ? ownClipSceneLength(s.duration, own.seconds, spoken, s.fit ?? 'narration') : sceneLength(s.duration, spoken, s.fit ?? 'narration'),
        clip,
        narration,
        clipSoundDb: own?.sound ? (narration ? OWN_CLIP_UNDER_NARRATION_DB : 0) : null,
      });
    }
    job = {
      width: input.width,
      height: input.height,
      fit: input.fit ?? 'pad',
      fps: input.fps,
      scenes,
      output: join(dir, `render-${task.id}-${randomBytes(4).toString('hex')}.part.mp4`),
    };
  } catch (err) {
    await repo.fail(task.id, `the render cannot start: ${(err as Error).message}`, 'no', lease());
    return;
  }

  let lastSave = 0;
  let saving = false;
  const run = runRender(job, ports.ffmpegPath, (fraction) => {
    if (saving || clock.now() - lastSave < PROGRESS_EVERY_MS) return;
    lastSave = clock.now();
    saving = true;
    // A row that was cancelled or taken over refuses the write: stop ffmpeg at once. A write that fails is
    // tried again with the next progress; the heartbeat keeps the lease meanwhile.
    repo
      .saveProgress(task.id, fraction, options.leaseMs, lease())
      .then(
        (kept) => {
          if (!kept) run.kill();
        },
        () => undefined,
      )
      .finally(() => (saving = false));
  });
  const pidFile = join(dir, `render-${task.id}.pid`);
  void run.pid.then((pid) => writeFile(pidFile, JSON.stringify({ pid, temp: job.output })));
  const onAbort = () => run.kill();
  signal.addEventListener('abort', onAbort);
  try {
    await run.done;
  } catch (err) {
    await rm(job.output, { force: true });
    if (!signal.aborted && (await repo.get(task.id))?.leaseOwner === options.owner) {
      await repo.fail(task.id, `the render failed: ${(err as Error).message}`, 'no', lease());
    }
    return;
  } finally {
    signal.removeEventListener('abort', onAbort);
    await rm(pidFile, { force: true });
  }

  const expected = job.scenes.reduce((sum, s) => sum + s.duration, 0);
  const result = await probe(job.output, ports.ffprobePath).catch(() => null);
  if (!result?.video || !result.audio || Math.abs((result.durationSec ?? 0) - expected) > 1.5 / job.fps) {
    await rm(job.output, { force: true });
    await repo.fail(task.id, `the render came out wrong (expected ${expected} s with picture and sound); it was not kept`, 'no', lease());
    return;
  }
  const final = join(dir, `render-${task.id}.mp4`);
  await rename(job.output, final);
  const bytes = (await stat(final)).size;
  const output = { path: media.stored(final), sha256: await sha256File(final), bytes, contentType: 'video/mp4' };
  if (!(await repo.complete(task.id, { outputs: [output], costActual: 0, costSource: 'made on this machine by ffmpeg, at no charge' }, lease()))) {
    ports.log(`task ${task.id}: lease lost before completing the render; the file is at ${final}`);
  }
}
