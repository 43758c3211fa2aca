import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { databasePath } from '../../main/config/paths.ts';
import { openDatabase } from '../../main/db/database.ts';
import { runRenderTask } from '../../main/engine/renderExecutor.ts';
import { ffmpegPath, ffprobePath } from '../../main/media/binaries.ts';
import { makeMedia } from '../../main/simulator/media.ts';
import { readStoryboard } from '../../main/domain/storyboard.ts';
import { openStudio } from '../../main/studio.ts';

const EXAMPLE = 'examples/fox-film.storyboard.json';

function runDirect(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(ffmpegPath(), ['-hide_banner', '-nostdin', '-y', ...args], { stdio: 'ignore' });
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`ffmpeg exited ${code}: ${args.join(" ")}`))));
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * The example storyboard's film, its clips and narrations made by the simulator and finished as the executor leaves
 * them. Three figures: the studio's full render (claimed task, every piece, the sound, the joining, progress on the
 * row, the ffprobe check, checksum, rename) against the same ffmpeg commands run directly; and the render again
 * after one scene's clip changed (a new take), against the full render.
 */
export async function benchRender(rounds = 5) {
  const dataDir = mkdtempSync(join(tmpdir(), 'studio-bench-render-'));
  const studio = await openStudio(dataDir);
  const project = await studio.projects.ensure('Bench', Date.now());
  const board = readStoryboard(JSON.parse(readFileSync(EXAMPLE, 'utf8')));
  const db = openDatabase(databasePath(dataDir));
  const done = async (kind: 'clip' | 'speech', path: string) => {
    const t = await studio.tasks.enqueue({ projectId: project.id, kind, provider: 'simulator', model: `sim-${kind}-1`, input: { path } }, Date.now());
    db.prepare(`UPDATE tasks SET status = 'SUCCEEDED', output_path = ?, finished_at = 1 WHERE id = ?`).run(path, t.id);
    return t.id;
  };
  const clipOf = async (i: number, take: number) => {
    const clip = join(dataDir, `clip-${i}-${take}.mp4`);
    writeFileSync(clip, (await makeMedia('clip', { prompt: `${board.scenes[i]!.imagePrompt}, take ${take}`, duration: board.scenes[i]!.duration, width: board.width, height: board.height })).bytes);
    return { $output: await done('clip', clip) };
  };
  const scenes: Record<string, unknown>[] = [];
  for (const [i, s] of board.scenes.entries()) {
    let narration = null;
    if (s.narration) {
      const speech = join(dataDir, `speech-${i}.wav`);
      writeFileSync(speech, (await makeMedia('speech', { text: s.narration })).bytes);
      narration = { $output: await done('speech', speech) };
    }
    scenes.push({ id: s.id, duration: s.duration, fit: s.fit, clip: await clipOf(i, 1), narration, text: s.narration, transition: s.transition ?? board.transition });
  }
  const changed = [...scenes];
  changed[1] = { ...scenes[1]!, clip: await clipOf(1, 2) };
  db.close();
  const input = (of: typeof scenes) => ({ width: board.width, height: board.height, fit: board.fit, fps: board.fps, scenes: of, subtitles: board.subtitles, loudness: board.loudness });
  const segments = join(dataDir, 'projects', String(project.id), 'segments');
  const render = async (of: typeof scenes, commands?: string[][]) => {
    const task = await studio.tasks.enqueue({ projectId: project.id, kind: 'render', provider: 'local', model: 'ffmpeg', input: input(of) }, Date.now());
    const [claimed] = await studio.tasks.claim('render', 1, 60_000, { owner: 'bench', now: Date.now() });
    const start = performance.now();
    await runRenderTask(
      claimed!,
      { repo: studio.tasks, clock: studio.clock, dataDir, ffmpegPath: ffmpegPath(), ffprobePath: ffprobePath(), log: () => undefined, commands },
      { owner: 'bench', leaseMs: 60_000 },
      new AbortController().signal,
    );
    const ms = performance.now() - start;
    const made = (await studio.tasks.get(task.id))!;
    if (made.status !== 'SUCCEEDED') throw new Error(`the benchmark render failed: ${made.error}`);
    return ms;
  };
  const engine: number[] = [];
  const direct: number[] = [];
  const again: number[] = [];
  for (let r = 0; r < rounds; r++) {
    rmSync(segments, { recursive: true, force: true });
    const commands: string[][] = [];
    engine.push(await render(scenes, commands));
    // The same commands again, on a cache emptied the same way: the pieces are made, not found.
    rmSync(segments, { recursive: true, force: true });
    mkdirSync(segments);
    const start = performance.now();
    for (const args of commands) {
      await runDirect(args);
      // A piece (or the sound) is put in place by its name, as the studio does after writing it.
      const piece = /^(.*[\\/][0-9a-f]{32})\.render-[^\\/]*\.part\.(mp4|m4a)$/.exec(args.at(-1)!);
      if (piece) renameSync(args.at(-1)!, `${piece[1]}.${piece[2]}`);
    }
    direct.push(performance.now() - start);
    rmSync(segments, { recursive: true, force: true });
    await render(scenes);
    again.push(await render(changed));
  }
  await studio.close();
  rmSync(dataDir, { recursive: true, force: true });
  return {
    seconds: board.scenes.reduce((n, s) => n + s.duration, 0),
    engineMs: Math.round(median(engine)),
    directMs: Math.round(median(direct)),
    ratio: Number((median(engine) / median(direct)).toFixed(3)),
    incrementalMs: Math.round(median(again)),
    incrementalRatio: Number((median(again) / median(engine)).toFixed(3)),
  };
}
