import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { ffmpegPath } from '../main/media/binaries.ts';
import { probe } from '../main/media/probe.ts';
import { Pipeline } from '../main/pipeline/generate.ts';
import { narrationWords } from '../main/pipeline/narrationLengths.ts';
import { planScenes } from '../main/pipeline/planner.ts';
import { parseStoryboard } from '../main/providers/storyboards.ts';
import { openProviders } from '../main/providers/registry.ts';
import { startSimulator, type RunningSimulator } from '../main/simulator/server.ts';
import { createSupervisor, openStudio } from '../main/studio.ts';
import { inputHash } from '../main/domain/tasks/inputHash.ts';
import { writeSettings } from './helpers/processes.ts';
import { sqlOf } from './helpers/sql.ts';
import { tempDir } from './helpers/tmp.ts';
import { untilAllSucceeded } from './helpers/wait.ts';

const run = promisify(execFile);

/** 27 words: about 9.3 s at eSpeak NG's 175 words a minute. */
const NARRATION = 'The river starts high in the mountains, where snow melts slowly under a pale spring sun, and it gathers strength as it falls through stone and forest.';
/** The same narration with a few words changed, as a creator polishes it. */
const EDITED = 'The river begins high in the hills, where snow melts slowly under a pale spring sun, and it gathers strength as it falls through rock and forest.';
const KLING = { provider: 'fal', model: 'fal-ai/kling-video/v2.1/standard/image-to-video' };

let sim: RunningSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

/** A studio on the simulator, with a project whose first scene is 3 s with `narration` and the second 1 s of silence. */
async function studioWith(narration: string, clip?: typeof KLING, [width, height] = [320, 240]) {
  sim = await startSimulator({ jobMs: 50 });
  const dataDir = tempDir();
  writeSettings(dataDir, { engine: { tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 100 } }, providers: { simulator: { baseUrl: sim.url }, fal: { key: 'fal-test-key' } } });
  const studio = await openStudio(dataDir);
  const providers = await openProviders(studio.settings, dataDir, {});
  const pipeline = new Pipeline({ studio, provider: providers.get, defaults: studio.settings.defaults });
  const project = await studio.projects.ensure('River', Date.now());
  const save = (text: string) => {
    const river = { id: 'river', imagePrompt: 'a river in the mountains', narration: text, duration: 3, ...(clip ? { steps: { clip } } : {}) };
    return studio.storyboards.save(project.id, parseStoryboard({ width, height, fps: 12, scenes: [river, { id: 'sea', imagePrompt: 'the sea', duration: 1 }] }), Date.now());
  };
  await save(narration);
  // A supervisor for each run, as each launch of the studio has its own.
  const finish = async () => {
    const supervisor = createSupervisor(studio, providers.get);
    supervisor.start();
    try {
      await untilAllSucceeded(studio.tasks);
    } finally {
      await supervisor.stop();
    }
  };
  const close = async () => {
    await providers.close();
    await studio.close();
  };
  return { dataDir, studio, pipeline, save, finish, close };
}

/**
 * The longest run of frames that stand still, in seconds: each frame of the video, small and grey, against the one
 * before; a frame with fewer than 0.2% of its pixels changed by more than 6 levels is the same picture.
 */
async function longestStill(file: string, fps: number): Promise<number> {
  const [w, h] = [160, 120];
  const { stdout } = await run(ffmpegPath(), ['-hide_banner', '-loglevel', 'error', '-i', file, '-vf', `scale=${w}:${h},format=gray`, '-f', 'rawvideo', '-'], { encoding: 'buffer', maxBuffer: 1 << 28 });
  const size = w * h;
  let run_ = 0;
  let longest = 0;
  for (let at = size; at + size <= stdout.length; at += size) {
    let changed = 0;
    for (let i = 0; i < size; i++) if (Math.abs(stdout[at + i]! - stdout[at - size + i]!) > 6) changed++;
    run_ = changed < size * 0.002 ? run_ + 1 : 0;
    longest = Math.max(longest, run_);
  }
  return longest / fps;
}

describe('a scene whose narration runs past its written length', () => {
  it('on the simulator: its clip is asked for the narration\'s predicted length, priced so, and the picture never stands still; a small edit keeps the clip', async () => {
    const s = await studioWith(NARRATION);
    try {
      const estimate = await s.pipeline.estimate('River');
      const clip = estimate.steps.find((x) => x.key === 'river:clip')!;
      // 9.3 s predicted and the half-second tail, rounded up to whole seconds: 10 s, at 0.1 a second.
      expect(clip.source).toMatch(/10 seconds at 0\.1/);
      expect(clip.cost).toBe(1_000_000);
      const note = estimate.narration.find((n) => n.scene === 'river')!;
      expect(note).toMatchObject({ predictedSec: 9.257, clipSec: 10, heldSec: 0 });
      expect(narrationWords(note)).toMatch(/the scene grows from 3 s to about 9\.8 s to hold it, its clip asked for 10 s$/);
      await s.pipeline.generate('River');
      await s.finish();
      const tasks = await s.studio.tasks.list();
      const made = tasks.find((t) => t.kind === 'clip' && (t.input as { prompt: string }).prompt !== 'the sea')!;
      expect((made.input as { duration: number }).duration).toBeGreaterThanOrEqual(9);
      const render = join(s.dataDir, tasks.find((t) => t.kind === 'render')!.outputPath!);
      const total = (await probe(render)).durationSec!;
      const still = await longestStill(render, 12);
      console.log(`render ${total.toFixed(2)} s; longest still stretch ${still.toFixed(2)} s`);
      expect(total).toBeGreaterThan(9);
      expect(still).toBeLessThanOrEqual(0.6);

      await s.save(EDITED);
      const after = await s.pipeline.estimate('River');
      expect(after.steps.map((x) => [x.key, x.action])).toEqual([
        ['river:image', 'reuse'], ['river:clip', 'reuse'], ['river:speech', 'new'], ['sea:image', 'reuse'], ['sea:clip', 'reuse'], ['render', 'new'],
      ]);
    } finally {
      await s.close();
    }
  }, 90_000);

  it('a narration shortened after its longer clip was bought keeps that clip: nothing is bought again, and the render is as long as the new narration', async () => {
    const s = await studioWith(NARRATION);
    try {
      await s.pipeline.generate('River');
      await s.finish();
      const clips = async () => (await s.studio.tasks.list()).filter((t) => t.kind === 'clip').map((t) => t.id);
      const before = await clips();
      // 12 words, about 4.1 s: a clip of 5 s would be asked for anew; the 10 s one covers it.
      await s.save('The river starts high in the mountains, where snow melts slowly.');
      const estimate = await s.pipeline.estimate('River');
      const clip = estimate.steps.find((x) => x.key === 'river:clip')!;
      expect(clip.action).toBe('reuse');
      expect(clip.source).toMatch(/a clip of 10 s bought before, for a longer narration, covers this scene/);
      await s.pipeline.generate('River');
      await s.finish();
      expect(await clips()).toEqual(before);
      const tasks = await s.studio.tasks.list();
      const render = tasks.filter((t) => t.kind === 'render').at(-1)!;
      // The shortened narration and its half-second tail, then the 1 s scene: not the 10 s of the clip.
      expect((await probe(join(s.dataDir, render.outputPath!))).durationSec!).toBeLessThan(7);
    } finally {
      await s.close();
    }
  }, 90_000);

  it('a project planned the old way (no size, the written 3 s) reuses its clips and buys nothing, and says the picture holds still', async () => {
    const s = await studioWith(NARRATION);
    try {
      await s.pipeline.generate('River');
      await s.finish();
      // The rows as the version before wrote them: no size fields, and each clip at its scene's written length.
      const sql = sqlOf(s.dataDir);
      for (const t of (await s.studio.tasks.list()).filter((x) => x.kind === 'image' || x.kind === 'clip')) {
        const { width: _w, height: _h, ...former } = t.input as Record<string, unknown>;
        if (t.kind === 'clip') former.duration = former.prompt === 'the sea' ? 1 : 3;
        sql.prepare('UPDATE tasks SET input_json = ?, input_hash = ? WHERE id = ?').run(JSON.stringify(former), inputHash(t.provider, t.model, former), t.id);
      }
      const estimate = await s.pipeline.estimate('River');
      expect(estimate.steps.map((x) => [x.key, x.action])).toEqual(estimate.steps.map((x) => [x.key, 'reuse']));
      expect(estimate.total).toBe(0);
      expect(estimate.steps.find((x) => x.key === 'river:clip')!.source).toMatch(/made at the scene's written length, before the studio asked for a clip as long as its narration/);
      const note = estimate.narration.find((n) => n.scene === 'river')!;
      expect(note).toMatchObject({ clipSec: 3, clipFormer: true, heldSec: 6.8 });
      expect(narrationWords(note)).toMatch(/; its clip, made before at 3 s, is reused, so the picture holds still for the last 6\.8 s \(a new take of the scene makes one as long as the narration\)$/);
      const before = (await s.studio.tasks.list()).length;
      await s.pipeline.generate('River');
      expect((await s.studio.tasks.list()).length).toBe(before);
    } finally {
      await s.close();
    }
  }, 90_000);

  it('on Kling: a 12 s narration asks for "10", priced at 10 s, and the estimate says 2 s and more stand still', async () => {
    const twelve = `${NARRATION} ${'On and on it runs toward the wide sea.'}`;
    const s = await studioWith(twelve, KLING, [640, 360]);
    try {
      const estimate = await s.pipeline.estimate('River');
      const note = estimate.narration.find((n) => n.scene === 'river')!;
      expect(note.predictedSec).toBeGreaterThan(12);
      const clip = estimate.steps.find((x) => x.key === 'river:clip')!;
      expect(clip.source).toMatch(/^catalogue: 10 seconds: 0\.28 USD for the first 5/);
      expect(clip.cost).toBe(560_000);
      expect(note.clipSec).toBe(10);
      expect(note.heldSec).toBeGreaterThanOrEqual(2);
      expect(narrationWords(note)).toMatch(/; its clip is asked for 10 s, the longest the model makes, so the picture holds still for the last [2-9]\.\d s$/);
      const plan = planScenes(parseStoryboard({ scenes: [{ id: 'river', imagePrompt: 'a river', narration: twelve, duration: 3, steps: { clip: KLING } }] }), s.studio.settings.defaults);
      expect(plan.find((x) => x.kind === 'clip')!.input.duration).toBe(10);
    } finally {
      await s.close();
    }
  }, 60_000);
});

describe('a storyboard saved before clips followed their narration', () => {
  it('plans exactly the clip inputs it did: no narration, a narration within the scene, or fit "scene"', () => {
    const board = parseStoryboard({ scenes: [
      { id: 'quiet', imagePrompt: 'a field', duration: 4 },
      { id: 'short', imagePrompt: 'a shore', narration: 'Waves come in.', duration: 4 },
      { id: 'cut', imagePrompt: 'a cliff', narration: NARRATION, duration: 3, fit: 'scene' },
      { id: 'kling', imagePrompt: 'a hill', narration: 'Wind.', duration: 3, steps: { clip: KLING } },
    ] });
    const defaults = { image: { provider: 'simulator', model: 'sim-image-1' }, clip: { provider: 'simulator', model: 'sim-clip-1' }, speech: { provider: 'simulator', model: 'sim-speech-1' } };
    const clips = planScenes(board, defaults).filter((x) => x.kind === 'clip');
    expect(clips.map((c) => [c.scene, c.input.duration])).toEqual([['quiet', 4], ['short', 4], ['cut', 3], ['kling', 3]]);
    // Kling takes no size field, so its step is the very one planned before: nothing former to look for.
    expect(clips.find((c) => c.scene === 'kling')!.formerInput).toBeUndefined();
  });
});
