import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ffmpegPath } from '../main/media/binaries.ts';
import { probe } from '../main/media/probe.ts';
import { startRuntime, type Runtime } from '../main/runtime.ts';
import { startSimulator, type RunningSimulator } from '../main/simulator/server.ts';
import { writeSettings } from './helpers/processes.ts';
import { cli } from './helpers/cli.ts';
import { tempDir } from './helpers/tmp.ts';

/** About fourteen seconds of speech at eSpeak NG's 175 words a minute. */
const LONG_NARRATION =
  'The river starts high in the mountains, where snow melts slowly under a pale spring sun. ' +
  'It gathers strength as it falls, cutting through stone and forest, until it reaches the valley ' +
  'and turns wide and calm, carrying the light of the morning all the way down to the sea.';

let sim: RunningSimulator | undefined;
let runtime: Runtime | undefined;
afterEach(async () => {
  await runtime?.stop();
  await sim?.close();
  sim = runtime = undefined;
});

interface TaskJson {
  kind: string;
  status: string;
  outputPath: string | null;
}

/** Makes a two-scene film on the simulator: a 3 s scene with the long narration (fitted as asked), then 2 s of silence. */
async function film(fit: 'narration' | 'scene' | undefined) {
  sim = await startSimulator({ jobMs: 50 });
  const dir = tempDir();
  writeSettings(dir, { engine: { tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 100 } }, providers: { simulator: { baseUrl: sim.url } } });
  const board = join(dir, 'board.json');
  const first = { id: 'river', imagePrompt: 'a river in the mountains', narration: LONG_NARRATION, duration: 3, ...(fit ? { fit } : {}) };
  writeFileSync(board, JSON.stringify({ width: 320, height: 240, fps: 12, scenes: [first, { id: 'sea', imagePrompt: 'the sea', duration: 2 }] }));
  expect((await cli(dir, 'storyboard', 'create', 'River', '--file', board)).code).toBe(0);
  const estimate = await cli(dir, 'estimate', 'River');
  expect((await cli(dir, 'generate', 'River')).code).toBe(0);
  expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
  const tasks = JSON.parse((await cli(dir, 'tasks', '--json')).out) as TaskJson[];
  const render = tasks.find((t) => t.kind === 'render')!;
  expect(render.status).toBe('SUCCEEDED');
  const speech = tasks.find((t) => t.kind === 'speech')!;
  return { estimate: estimate.out, render: join(dir, render.outputPath!), speech: join(dir, speech.outputPath!) };
}

/** When the sound last falls silent for good: the end of the last word (silencedetect at -50 dB). */
function speechEnds(file: string, length: number): number {
  const { stderr } = spawnSync(ffmpegPath(), ['-hide_banner', '-i', file, '-af', 'silencedetect=noise=-50dB:d=0.3', '-f', 'null', '-'], { encoding: 'utf8' });
  const silences = [...stderr.matchAll(/silence_start: ([\d.]+)[^]*?silence_end: ([\d.]+)/g)].map((m) => ({ start: Number(m[1]), end: Number(m[2]) }));
  // The silence that runs to the end of the file begins where the speech stopped.
  const last = silences.at(-1);
  return last && last.end > length - 0.1 ? last.start : length;
}

describe('narration fits its scene', () => {
  it('by default, a 3 s scene with about 14 s of narration lasts the whole narration and a tail, every word heard', async () => {
    const { render, speech, estimate } = await film(undefined);
    const spoken = (await probe(speech)).durationSec!;
    const total = (await probe(render)).durationSec!;
    const scene = total - 2;
    console.log(`narration ${spoken.toFixed(2)} s; render ${total.toFixed(2)} s; the narrated scene ${scene.toFixed(2)} s`);
    expect(spoken).toBeGreaterThan(12);
    expect(scene).toBeGreaterThanOrEqual(spoken);
    expect(scene).toBeCloseTo(spoken + 0.5, 1);
    // Every word: the render's sound stops where the narration's own does, not at 3 s.
    const inRender = speechEnds(render, total);
    const inSpeech = speechEnds(speech, spoken);
    console.log(`last word ends at ${inSpeech.toFixed(2)} s in the narration, ${inRender.toFixed(2)} s in the render`);
    expect(inRender).toBeGreaterThan(12);
    expect(Math.abs(inRender - inSpeech)).toBeLessThan(0.15);
    expect(estimate).toMatch(/river: narration about 1\d\.\d s \(predicted at 175 words a minute.*\): the scene grows from 3 s to about 1\d\.\d s/);
    expect(estimate).not.toMatch(/will be cut/);
    // The clip is asked for the narration's predicted 17.1 s and its tail, in whole seconds (see clip-length.test.ts).
    expect(estimate).toMatch(/river:clip .*catalogue: 18 seconds/);
  }, 90_000);

  it('with fit "scene", the scene keeps its 3 s and the estimate said how much narration would be cut', async () => {
    const { render, speech, estimate } = await film('scene');
    const spoken = (await probe(speech)).durationSec!;
    const total = (await probe(render)).durationSec!;
    console.log(`narration ${spoken.toFixed(2)} s; render ${total.toFixed(2)} s`);
    expect(total).toBeCloseTo(5, 1);
    // Cut, as the estimate warned: the sound stops at the scene's end, 3 s in.
    expect(speechEnds(render, total)).toBeCloseTo(3, 1);
    expect(estimate).toMatch(/Warning: river: narration about 1\d\.\d s \(predicted at 175 words a minute.*\) will be cut to the scene's 3 s, losing about 1\d\.\d s/);
  }, 90_000);
});

describe('the estimate foresees the narration', () => {
  it('through the API: predicted length, and the cut a fit "scene" makes', async () => {
    sim = await startSimulator({ jobMs: 50 });
    const dir = tempDir();
    writeSettings(dir, { engine: { tickMs: 50 }, providers: { simulator: { baseUrl: sim.url }, fal: { key: 'fal-test-key' } } });
    const board = join(dir, 'board.json');
    const kling = { provider: 'fal', model: 'fal-ai/kling-video/v2.1/standard/image-to-video' };
    const scenes = [
      { id: 'river', imagePrompt: 'a river', narration: LONG_NARRATION, duration: 3, steps: { clip: kling } },
      { id: 'short', imagePrompt: 'a shore', narration: LONG_NARRATION, duration: 3, fit: 'scene' },
    ];
    writeFileSync(board, JSON.stringify({ scenes }));
    expect((await cli(dir, 'storyboard', 'create', 'River', '--file', board)).code).toBe(0);
    runtime = await startRuntime(dir, { mediaUrl: (id) => `/media/${id}` });
    const e = await runtime.service.estimate('River');
    // 50 words at eSpeak NG's 175 a minute: 17.1 s, and the half-second tail.
    expect(e.narration).toEqual([
      expect.objectContaining({ scene: 'river', predictedSec: 17.143, sceneSec: 17.643, cutSec: 0 }),
      expect.objectContaining({ scene: 'short', predictedSec: 17.143, sceneSec: 3, cutSec: 14.143 }),
    ]);
    expect(e.narration[1]!.text).toMatch(/will be cut to the scene's 3 s, losing about 14\.1 s/);
  }, 60_000);
});
