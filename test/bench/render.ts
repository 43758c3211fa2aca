import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { databasePath } from '../../main/config/paths.ts';
import { openDatabase } from '../../main/db/database.ts';
import { runRenderTask } from '../../main/engine/renderExecutor.ts';
import { ffmpegPath, ffprobePath } from '../../main/media/binaries.ts';
import { renderArgs, type RenderJob } from '../../main/media/renderer.ts';
import { makeMedia } from '../../main/simulator/media.ts';
import { openStudio } from '../../main/studio.ts';

const SCENES = 3;
const SECONDS = 3;

function runDirect(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(ffmpegPath(), args, { stdio: 'ignore' });
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`ffmpeg exited ${code}`))));
  });
}

/**
 * Wall time of the studio's render (claimed task, fluent-ffmpeg, progress on the row, ffprobe check,
 * checksum, rename) against the same ffmpeg command line run directly on the same inputs.
 */
export async function benchRender(rounds = 5) {
  const dataDir = mkdtempSync(join(tmpdir(), 'studio-bench-render-'));
  const studio = await openStudio(dataDir);
  const project = await studio.projects.ensure('Bench', Date.now());
  // The scenes' clips and narrations, finished as the executor leaves them, written directly.
  const db = openDatabase(databasePath(dataDir));
  const done = async (kind: 'clip' | 'speech', path: string) => {
    const t = await studio.tasks.enqueue({ projectId: project.id, kind, provider: 'simulator', model: `sim-${kind}-1`, input: { path } }, Date.now());
    db.prepare(`UPDATE tasks SET status = 'SUCCEEDED', output_path = ?, finished_at = 1 WHERE id = ?`).run(path, t.id);
    return t.id;
  };
  const scenes = [];
  const job: RenderJob = { scenes: [], width: 1280, height: 720, fit: 'pad', fps: 24, output: join(dataDir, 'direct.mp4') };
  for (let i = 0; i < SCENES; i++) {
    const clip = join(dataDir, `clip-${i}.mp4`);
    const speech = join(dataDir, `speech-${i}.wav`);
    writeFileSync(clip, (await makeMedia('clip', { prompt: `scene ${i}`, duration: SECONDS })).bytes);
    writeFileSync(speech, (await makeMedia('speech', { text: `This is scene number ${i}.` })).bytes);
    scenes.push({ duration: SECONDS, clip: { $output: await done('clip', clip) }, narration: { $output: await done('speech', speech) } });
    job.scenes.push({ clip, narration: speech, duration: SECONDS });
  }
  db.close();
  const args = renderArgs(job, ffmpegPath());
  const engine: number[] = [];
  const direct: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const task = await studio.tasks.enqueue({ projectId: project.id, kind: 'render', provider: 'local', model: 'ffmpeg', input: { width: 1280, height: 720, fps: 24, scenes } }, Date.now());
    const [claimed] = await studio.tasks.claim('render', 1, 60_000, { owner: 'bench', now: Date.now() });
    // Alternate which goes first, so neither always meets a warmer disk cache.
    if (r % 2 === 1) {
      const t = performance.now();
      await runDirect(args);
      direct.push(performance.now() - t);
    }
    let start = performance.now();
    await runRenderTask(
      claimed!,
      { repo: studio.tasks, clock: studio.clock, dataDir, ffmpegPath: ffmpegPath(), ffprobePath: ffprobePath(), log: () => undefined },
      { owner: 'bench', leaseMs: 60_000 },
      new AbortController().signal,
    );
    engine.push(performance.now() - start);
    if ((await studio.tasks.get(task.id))!.status !== 'SUCCEEDED') throw new Error(`the benchmark render failed: ${(await studio.tasks.get(task.id))!.error}`);
    if (r % 2 === 0) {
      start = performance.now();
      await runDirect(args);
      direct.push(performance.now() - start);
    }
  }
  await studio.close();
  rmSync(dataDir, { recursive: true, force: true });
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return {
    seconds: SCENES * SECONDS,
    engineMs: Math.round(median(engine)),
    directMs: Math.round(median(direct)),
    ratio: Number((median(engine) / median(direct)).toFixed(3)),
  };
}
