import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { ffmpegPath } from '../main/media/binaries.ts';
import { probe } from '../main/media/probe.ts';
import { Pipeline } from '../main/pipeline/generate.ts';
import { sizeFor } from '../main/providers/frameSizes.ts';
import { parseStoryboard } from '../main/providers/storyboards.ts';
import { openProviders } from '../main/providers/registry.ts';
import { startSimulator, type RunningSimulator } from '../main/simulator/server.ts';
import { createSupervisor, openStudio } from '../main/studio.ts';
import type { Fit } from '../main/domain/frameShape.ts';
import { inputHash } from '../main/domain/tasks/inputHash.ts';
import { writeSettings } from './helpers/processes.ts';
import { sqlOf } from './helpers/sql.ts';
import { renderScenes } from './helpers/film.ts';
import { tempDir } from './helpers/tmp.ts';
import { untilAllSucceeded } from './helpers/wait.ts';

const run = promisify(execFile);

/** Mean luma (0 to 255) of each row of the frame at `at` seconds. */
async function rowLuma(file: string, at: number): Promise<{ width: number; height: number; rows: number[] }> {
  const { video } = await probe(file);
  const { width, height } = video!;
  const { stdout } = await run(ffmpegPath(), ['-v', 'error', '-ss', String(at), '-i', file, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'gray', '-'], { encoding: 'buffer', maxBuffer: 64 << 20 });
  const rows = Array.from({ length: height }, (_, y) => {
    let sum = 0;
    for (let x = 0; x < width; x++) sum += stdout[y * width + x]!;
    return sum / width;
  });
  return { width, height, rows };
}

/** Rows as dark as a letterbox bar: black is 0 here, and every picture in these tests is far brighter. */
const darkRows = (rows: number[]) => rows.filter((l) => l < 20).length;

/** A landscape 640x360 clip of a bright colour, as a model of another shape would make one. */
async function landscapeClip(dir: string): Promise<string> {
  const out = join(dir, 'landscape.mp4');
  await run(ffmpegPath(), ['-v', 'error', '-f', 'lavfi', '-i', 'color=c=0x9ad4b4:s=640x360:r=24:d=1', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', out, '-y']);
  return out;
}

describe('the project\'s shape', () => {
  it('reads "aspect" with "resolution" as the short side, fit crop by default, and refuses a mix of both ways', () => {
    const scenes = [{ imagePrompt: 'a fox' }];
    expect(parseStoryboard({ aspect: '9:16', resolution: 1080, scenes })).toMatchObject({ width: 1080, height: 1920, fit: 'crop' });
    expect(parseStoryboard({ aspect: '21:9', resolution: 720, scenes })).toMatchObject({ width: 1680, height: 720 });
    expect(parseStoryboard({ aspect: '4:5', resolution: 1080, fit: 'blur', scenes })).toMatchObject({ width: 1080, height: 1350, fit: 'blur' });
    expect(parseStoryboard({ width: 1080, height: 1920, scenes })).toMatchObject({ width: 1080, height: 1920, fit: 'crop' });
    expect(() => parseStoryboard({ aspect: '9:16', width: 1080, scenes })).toThrow(/give either "aspect" \(with "resolution"\) or "width" and "height"/);
    expect(() => parseStoryboard({ aspect: '3:1', scenes })).toThrow(/aspect: must be one of "16:9", "9:16", "1:1", "4:5", "21:9"/);
    expect(() => parseStoryboard({ resolution: 1080, scenes })).toThrow(/resolution: goes with "aspect"/);
    expect(() => parseStoryboard({ fit: 'stretch', scenes })).toThrow(/fit: must be one of "crop", "pad", "blur"/);
  });

  it('asks every model for a 16:9 frame too, each in its own size field', () => {
    expect(sizeFor('fal', 'fal-ai/flux/dev', 'image', 1280, 720).input).toEqual({ image_size: { width: 1280, height: 720 } });
    expect(sizeFor('openai', 'gpt-image-1', 'image', 1920, 1080).input).toEqual({ size: '1536x1024' });
    expect(sizeFor('replicate', 'black-forest-labs/flux-dev', 'image', 1280, 720).input).toEqual({ aspect_ratio: '16:9' });
    expect(sizeFor('simulator', 'sim-image-1', 'image', 1280, 720).input).toEqual({ width: 1280, height: 720 });
  });

  it('asks each model for the shape in its own size field, the nearest where it has no exact one, and says so', () => {
    expect(sizeFor('simulator', 'sim-image-1', 'image', 1080, 1920)).toEqual({ input: { width: 1080, height: 1920 }, made: null, note: null });
    expect(sizeFor('fal', 'fal-ai/flux/dev', 'image', 1080, 1920).input).toEqual({ image_size: { width: 1080, height: 1920 } });
    expect(sizeFor('fal', 'fal-ai/kling-video/v2.1/standard/image-to-video', 'clip', 1080, 1920).input).toEqual({});
    const gpt = sizeFor('openai', 'gpt-image-1', 'image', 1080, 1920);
    expect(gpt.input).toEqual({ size: '1024x1536' });
    expect(gpt.note).toBe('gpt-image-1 makes 1024x1536, the nearest of its sizes to 1080x1920; the render fits it to the frame');
    expect(sizeFor('openai', 'dall-e-3', 'image', 1080, 1920).input).toEqual({ size: '1024x1792' });
    expect(sizeFor('openai', 'gpt-image-1', 'image', 1024, 1024)).toMatchObject({ input: { size: '1024x1024' }, note: null });
    // Replicate's FLUX makes each aspect on its own grid of pixels (9:16 is 768x1344): said in the estimate.
    expect(sizeFor('replicate', 'black-forest-labs/flux-dev', 'image', 1080, 1920)).toMatchObject({ input: { aspect_ratio: '9:16' }, made: '768x1344' });
    expect(sizeFor('replicate', 'black-forest-labs/flux-dev', 'image', 1080, 1350)).toMatchObject({ input: { aspect_ratio: '4:5' }, made: '896x1088' });
    expect(sizeFor('replicate', 'black-forest-labs/flux-dev', 'image', 1000, 2000).note).toMatch(/makes 768x1344 \(its 9:16\), the nearest of its sizes to 1000x2000/);
  });

  it.each<[Fit, boolean]>([['crop', false], ['blur', false], ['pad', true]])('renders a landscape clip into a 1080x1920 frame with fit %s (bars: %s)', async (fit, bars) => {
    const dir = tempDir();
    const { output } = await renderScenes(dir, [{ clip: await landscapeClip(dir), seconds: 1 }], { width: 1080, height: 1920, fit, fps: 24 });
    const { width, height, rows } = await rowLuma(output, 0.5);
    expect([width, height]).toEqual([1080, 1920]);
    // 640x360 fitted whole into 1080 wide is 608 high, leaving 656 black rows above and below.
    if (bars) expect(darkRows(rows)).toBeGreaterThan(1200);
    else expect(darkRows(rows)).toBe(0);
  });
});

describe('the estimate of a portrait project', () => {
  it('says which model makes only the nearest shape, and asks the simulator for the exact one', async () => {
    const dataDir = tempDir();
    writeSettings(dataDir, {});
    const studio = await openStudio(dataDir);
    const providers = await openProviders(studio.settings, dataDir, {});
    try {
      const project = await studio.projects.ensure('Tall', Date.now());
      const board = { aspect: '9:16', resolution: 1080, steps: { image: { provider: 'openai', model: 'gpt-image-1' } }, scenes: [{ imagePrompt: 'a fox' }] };
      await studio.storyboards.save(project.id, parseStoryboard(board), Date.now());
      const estimate = await new Pipeline({ studio, provider: providers.get, defaults: studio.settings.defaults }).estimate('Tall');
      expect(estimate.shape).toEqual(['gpt-image-1 makes 1024x1536, the nearest of its sizes to 1080x1920; the render fits it to the frame']);
    } finally {
      await providers.close();
      await studio.close();
    }
  });
});

describe('a portrait project on the simulator', () => {
  let sim: RunningSimulator | undefined;
  afterEach(async () => sim?.close());

  it('makes portrait stills and clips at 1080x1920 and renders 1080x1920 with no dark rows', async () => {
    sim = await startSimulator({ jobMs: 50 });
    const dataDir = tempDir();
    writeSettings(dataDir, { engine: { tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 100 } }, providers: { simulator: { baseUrl: sim.url } } });
    const studio = await openStudio(dataDir);
    const providers = await openProviders(studio.settings, dataDir, {});
    const supervisor = createSupervisor(studio, providers.get);
    try {
      const project = await studio.projects.ensure('Tall', Date.now());
      const board = { aspect: '9:16', resolution: 1080, scenes: ['a lighthouse at dawn', 'a red kite over hills'].map((imagePrompt) => ({ imagePrompt, duration: 1 })) };
      await studio.storyboards.save(project.id, parseStoryboard(board), Date.now());
      await new Pipeline({ studio, provider: providers.get, defaults: studio.settings.defaults }).generate('Tall');
      supervisor.start();
      await untilAllSucceeded(studio.tasks);
      const tasks = await studio.tasks.list();
      for (const t of tasks.filter((x) => x.kind === 'image' || x.kind === 'clip')) {
        const { video } = await probe(join(dataDir, t.outputPath!));
        expect([t.kind, video!.width, video!.height]).toEqual([t.kind, 1080, 1920]);
      }
      const render = join(dataDir, tasks.find((t) => t.kind === 'render')!.outputPath!);
      const { video, durationSec } = await probe(render);
      expect([video!.width, video!.height]).toEqual([1080, 1920]);
      expect(durationSec).toBeCloseTo(2, 1);
      for (const at of [0.5, 1.5]) expect(darkRows((await rowLuma(render, at)).rows)).toBe(0);
    } finally {
      await supervisor.stop();
      await providers.close();
      await studio.close();
    }
  }, 90_000);
});

describe('a project bought before its models were asked for the frame', () => {
  let sim: RunningSimulator | undefined;
  afterEach(async () => sim?.close());

  it.each([[640, 360], [360, 640]])('%ix%i: gets stills in its shape now, and what it bought unsized is reused, said so: nothing is bought again', async (width, height) => {
    sim = await startSimulator({ jobMs: 50 });
    const dataDir = tempDir();
    writeSettings(dataDir, { engine: { tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 100 } }, providers: { simulator: { baseUrl: sim.url } } });
    const studio = await openStudio(dataDir);
    const providers = await openProviders(studio.settings, dataDir, {});
    const supervisor = createSupervisor(studio, providers.get);
    const pipeline = new Pipeline({ studio, provider: providers.get, defaults: studio.settings.defaults });
    try {
      const project = await studio.projects.ensure('Wide', Date.now());
      const board = { width, height, scenes: ['a lighthouse at dawn', 'a red kite over hills'].map((imagePrompt) => ({ imagePrompt, duration: 1 })) };
      await studio.storyboards.save(project.id, parseStoryboard(board), Date.now());
      await pipeline.generate('Wide');
      supervisor.start();
      await untilAllSucceeded(studio.tasks);
      await supervisor.stop();
      const made = (await studio.tasks.list()).filter((t) => t.kind === 'image' || t.kind === 'clip');
      for (const t of made) {
        expect(t.input).toMatchObject({ width, height });
        const { video } = await probe(join(dataDir, t.outputPath!));
        expect([t.kind, video!.width, video!.height]).toEqual([t.kind, width, height]);
      }
      // The rows as the version before wrote them: the same steps with no size fields.
      const sql = sqlOf(dataDir);
      for (const t of made) {
        const { width: _w, height: _h, ...former } = t.input as Record<string, unknown>;
        sql.prepare('UPDATE tasks SET input_json = ?, input_hash = ? WHERE id = ?').run(JSON.stringify(former), inputHash(t.provider, t.model, former), t.id);
      }
      const estimate = await pipeline.estimate('Wide');
      expect(estimate.steps.map((s) => [s.key, s.action])).toEqual(estimate.steps.map((s) => [s.key, 'reuse']));
      expect(estimate.total).toBe(0);
      for (const step of estimate.steps.filter((s) => s.kind === 'image' || s.kind === 'clip')) expect(step.source).toMatch(/made before the studio asked the model for the project's shape/);
      const before = (await studio.tasks.list()).length;
      await pipeline.generate('Wide');
      expect((await studio.tasks.list()).length).toBe(before);
    } finally {
      await supervisor.stop();
      await providers.close();
      await studio.close();
    }
  }, 90_000);
});
