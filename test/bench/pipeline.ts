import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runRenderTask } from '../../main/engine/renderExecutor.ts';
import { ffmpegPath, ffprobePath } from '../../main/media/binaries.ts';
import { Pipeline } from '../../main/pipeline/generate.ts';
import { parseStoryboard } from '../../main/providers/storyboards.ts';
import { openProviders } from '../../main/providers/registry.ts';
import { startSimulator } from '../../main/simulator/server.ts';
import { createSupervisor, openStudio } from '../../main/studio.ts';

const JOB_MS = 3_000;
const STORYBOARD = new URL('../../examples/fox.storyboard.json', import.meta.url);

export function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
}

async function until(done: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > end) throw new Error(`the benchmark did not finish within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * One Generate of the example storyboard with the engine's default settings, every simulator job taking
 * JOB_MS: wall time from Generate to the rendered file, against its critical path (image, then clip, then the
 * render, the render timed alone on the same inputs afterwards).
 */
async function pipelineOnce() {
  const sim = await startSimulator({ jobMs: JOB_MS });
  const dir = mkdtempSync(join(tmpdir(), 'studio-bench-pipeline-'));
  writeFileSync(join(dir, 'settings.json'), JSON.stringify({ providers: { simulator: { baseUrl: sim.url } } }));
  const studio = await openStudio(dir);
  const providers = await openProviders(studio.settings, dir, {});
  const project = await studio.projects.ensure('Fox', Date.now());
  await studio.storyboards.save(project.id, parseStoryboard(JSON.parse(readFileSync(STORYBOARD, 'utf8'))), Date.now());
  const pipeline = new Pipeline({ studio, provider: providers.get, defaults: studio.settings.defaults });
  const engine = createSupervisor(studio, providers.get);
  engine.start();
  try {
    const start = Date.now();
    await pipeline.generate('Fox');
    const render = async () => (await studio.tasks.list({ projectId: project.id })).find((t) => t.kind === 'render');
    await until(async () => ['SUCCEEDED', 'FAILED', 'CANCELLED', 'OUTCOME_UNKNOWN'].includes((await render())?.status ?? ''), 120_000);
    const made = (await render())!;
    if (made.status !== 'SUCCEEDED') throw new Error(`the benchmark render ended ${made.status}: ${made.error}`);
    const wallMs = made.finishedAt! - start;
    await engine.stop();

    const again = await studio.tasks.enqueue({ projectId: project.id, kind: 'render', provider: 'local', model: 'ffmpeg', input: made.input }, Date.now());
    const [claimed] = await studio.tasks.claim('render', 1, 60_000, { owner: 'bench', now: Date.now() });
    const t = performance.now();
    await runRenderTask(
      claimed!,
      { repo: studio.tasks, clock: studio.clock, dataDir: dir, ffmpegPath: ffmpegPath(), ffprobePath: ffprobePath(), log: () => undefined },
      { owner: 'bench', leaseMs: 60_000 },
      new AbortController().signal,
    );
    const renderMs = performance.now() - t;
    if ((await studio.tasks.get(again.id))!.status !== 'SUCCEEDED') throw new Error('the render timed alone failed');
    return { wallMs, criticalMs: 2 * JOB_MS + renderMs };
  } finally {
    await engine.stop();
    await providers.close();
    await studio.close();
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchPipeline(runs = 3) {
  const results = [];
  for (let i = 0; i < runs; i++) results.push(await pipelineOnce());
  const ratios = results.map((r) => Number((r.wallMs / r.criticalMs).toFixed(3)));
  return {
    jobMs: JOB_MS,
    ratio: median(ratios),
    ratios,
    wallMs: Math.round(median(results.map((r) => r.wallMs))),
    criticalMs: Math.round(median(results.map((r) => r.criticalMs))),
  };
}
