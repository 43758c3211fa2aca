import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cancelTask } from '../main/engine/decisions.ts';
import { probe } from '../main/media/probe.ts';
import { Pipeline } from '../main/pipeline/generate.ts';
import { parseStoryboard } from '../main/providers/storyboards.ts';
import { openProviders } from '../main/providers/registry.ts';
import { startSimulator, type RunningSimulator } from '../main/simulator/server.ts';
import { createSupervisor, openStudio } from '../main/studio.ts';
import type { Task } from '../main/domain/tasks/model.ts';
import { runStudio, startStudio, writeSettings } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';

/** A render long enough to be caught in the middle: 12 s at 1280x720. */
const LONG = {
  width: 1280,
  height: 720,
  fps: 30,
  scenes: ['one', 'two', 'three'].map((id) => ({ id, imagePrompt: `scene ${id}`, narration: `This is scene ${id}.`, duration: 4 })),
};

let sim: RunningSimulator;
afterEach(async () => sim?.close());

/** Makes every scene step, leaving the render enqueued and not yet run. */
async function scenesMade(): Promise<{ dataDir: string; env: Record<string, string> }> {
  sim = await startSimulator({ jobMs: 100 });
  const dataDir = tempDir();
  writeSettings(dataDir, { engine: { tickMs: 50, concurrency: { render: 0 }, poll: { intervalMs: 50, maxIntervalMs: 100 } }, providers: { simulator: { baseUrl: sim.url } } });
  const studio = await openStudio(dataDir);
  const providers = await openProviders(studio.settings, dataDir, {});
  const project = await studio.projects.ensure('Long', Date.now());
  await studio.storyboards.save(project.id, parseStoryboard(LONG), Date.now());
  await new Pipeline({ studio, provider: providers.get, defaults: studio.settings.defaults }).generate('Long');
  const supervisor = createSupervisor(studio, providers.get);
  supervisor.start();
  await until(async () => (await studio.tasks.list()).every((t) => t.kind === 'render' || t.status === 'SUCCEEDED'));
  await supervisor.stop();
  await providers.close();
  await studio.close();
  writeSettings(dataDir, { engine: { tickMs: 50, leaseMs: 60_000 }, providers: { simulator: { baseUrl: sim.url } } });
  return { dataDir, env: { STUDIO_SIMULATOR_BASE_URL: sim.url } };
}

async function renderTask(dataDir: string): Promise<Task> {
  const studio = await openStudio(dataDir);
  try {
    return (await studio.tasks.list()).find((t) => t.kind === 'render')!;
  } finally {
    await studio.close();
  }
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every ffmpeg at work on the project's folder: a piece, the sound or the film. */
function ffmpegsWriting(project: string): string[] {
  try {
    return execFileSync('pgrep', ['-af', `ffmpeg.*${project}`], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

/** What a render leaves while it works, in its renders folder and among the project's pieces. */
const leftovers = (project: string) =>
  ['renders', 'segments'].flatMap((d) => (existsSync(join(project, d)) ? readdirSync(join(project, d)).filter((f) => f.includes('.part') || f.endsWith('.pid') || f.endsWith('.work')) : []));

describe('the render', () => {
  it('killed with SIGKILL mid-render, runs again on restart, stops the orphaned ffmpeg and leaves no partial file', async () => {
    const { dataDir, env } = await scenesMade();
    const renders = join(dataDir, 'projects', '1');
    const worker = startStudio(dataDir, ['worker', '--until-idle'], env);
    await until(async () => ((await renderTask(dataDir)).progress ?? 0) > 0);
    worker.child.kill('SIGKILL');
    await worker.exited;
    expect((await renderTask(dataDir)).status).toBe('RUNNING');
    expect(leftovers(renders).some((f) => f.endsWith('.part.mp4'))).toBe(true);
    expect(ffmpegsWriting(renders).length).toBeLessThanOrEqual(1);

    const again = await runStudio(dataDir, ['worker', '--until-idle'], env);
    expect(again.code, again.stderr).toBe(0);
    const task = await renderTask(dataDir);
    expect(task.status).toBe('SUCCEEDED');
    expect((await probe(join(dataDir, task.outputPath!))).durationSec).toBeCloseTo(12, 1);
    expect(leftovers(renders)).toEqual([]);
    expect(ffmpegsWriting(renders)).toEqual([]);
    expect(sim.charges).toHaveLength(9);
  });

  it('cancelled mid-render, ends the ffmpeg process and leaves no partial file', async () => {
    const { dataDir } = await scenesMade();
    const renders = join(dataDir, 'projects', '1');
    const studio = await openStudio(dataDir);
    const providers = await openProviders(studio.settings, dataDir);
    const supervisor = createSupervisor(studio, providers.get);
    supervisor.start();
    try {
      await until(async () => ((await studio.tasks.list()).find((t) => t.kind === 'render')!.progress ?? 0) > 0);
      // One ffmpeg at a time, each piece its own: between two of them there is a moment with none.
      await until(() => ffmpegsWriting(renders).length === 1, 10_000);
      const id = (await studio.tasks.list()).find((t) => t.kind === 'render')!.id;
      await cancelTask(studio.tasks, undefined, id, Date.now());
      await until(() => ffmpegsWriting(renders).length === 0 && leftovers(renders).length === 0, 5_000);
      expect((await studio.tasks.get(id))!.status).toBe('CANCELLED');
    } finally {
      await supervisor.stop();
      await providers.close();
      await studio.close();
    }
  });
});
