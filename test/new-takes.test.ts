import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkCall, IpcRefused } from '../app/ipcValidation.ts';
import { readStoryboard } from '../main/domain/storyboard.ts';
import { newTake, pickedScene, readTakeChoice, withNewTakes } from '../main/pipeline/newTakes.ts';
import { planScenes } from '../main/pipeline/planner.ts';
import type { Kind } from '../main/domain/tasks/model.ts';
import type { RunningSimulator } from '../main/simulator/server.ts';
import { cli } from './helpers/cli.ts';
import { writeSettings } from './helpers/processes.ts';
import { simulatorForTest } from './helpers/running.ts';
import { TWO_SCENES } from './helpers/boards.ts';
import { tempDir } from './helpers/tmp.ts';

const DEFAULTS = {
  image: { provider: 'simulator', model: 'sim-image-1' },
  clip: { provider: 'simulator', model: 'sim-clip-1' },
  speech: { provider: 'simulator', model: 'sim-speech-1' },
};

/** A storyboard as it was saved before a take could vary one step: a scene on its third take, with its own seed. */
const OLD_BOARD = { width: 320, height: 180, fps: 24, scenes: [{ id: 'dawn', imagePrompt: 'a fox', motionPrompt: 'push in', narration: 'Dawn.', duration: 1, seed: 100, take: 3 }] };

describe('new takes of one step', () => {
  it('a storyboard saved before plans the very inputs it did: both seeds 100 + 2 x 7919', () => {
    // 16:9, so a model is now also asked for the size; the step is still the one it was without it (formerInput).
    const inputs = planScenes(readStoryboard(OLD_BOARD), DEFAULTS).map((s) => [s.key, s.formerInput ?? s.input]);
    expect(inputs).toEqual([
      ['dawn:image', { prompt: 'a fox', seed: 15_938 }],
      ['dawn:clip', { prompt: 'push in', image_url: { $step: 'dawn:image' }, duration: 1, seed: 15_938 }],
      ['dawn:speech', { text: 'Dawn.' }],
    ]);
  });

  it('a new take keeps the seed of the step it does not make again, and a picked take writes back the seeds it was made with', () => {
    const [scene] = readStoryboard(OLD_BOARD).scenes;
    expect(newTake(scene!, 4, { only: 'both' })).toEqual({ ...scene, take: 4 });
    expect(newTake(scene!, 4, { only: 'clip' })).toEqual({ ...scene, take: 4, imageSeed: 15_938 });
    expect(newTake(scene!, 4, { only: 'image' })).toEqual({ ...scene, take: 4, clipSeed: 15_938 });
    expect(newTake(scene!, 4, { only: 'clip', seed: 7 })).toEqual({ ...scene, take: 4, imageSeed: 15_938, clipSeed: 7 });
    // Picking back the take the seeds came from leaves the scene as it was written.
    expect(pickedScene({ ...scene!, take: 4, imageSeed: 15_938 }, 3, { image: 15_938, clip: 15_938 })).toEqual(scene);
    expect(() => readTakeChoice('sound', undefined)).toThrow('a new take is of "clip" (the same still, a new clip), "image" (a new still and so a new clip) or "both", not "sound"');
    expect(() => readTakeChoice('clip', -1)).toThrow('a seed is a whole number from 0 to 2147483647, not -1');
    expect(() => withNewTakes(readStoryboard(OLD_BOARD), [], [], { only: 'clip' })).toThrow('name the scene with a new take');
    const mine = readStoryboard({ ...OLD_BOARD, scenes: [{ ...OLD_BOARD.scenes[0], image: { task: 3 } }] });
    expect(() => withNewTakes(mine, ['dawn'], [], { only: 'image' })).toThrow('scene "dawn" uses your own still, so a new take of its image would make nothing new');
  });

  it('the app page may ask for a new take of one step, a seed and variations, and nothing else', () => {
    const page = { url: 'app://studio/index.html', isMainFrame: true };
    expect(() => checkCall('estimate', ['Fox', ['dawn'], { only: 'clip', seed: 42, variations: 3 }], page)).not.toThrow();
    expect(() => checkCall('generate', ['Fox', ['dawn'], { only: 'image', rebuyLost: false }], page)).not.toThrow();
    for (const options of [{ only: 'sound' }, { seed: -1 }, { seed: '42' }, { variations: 1.5 }]) {
      expect(() => checkCall('generate', ['Fox', ['dawn'], options], page)).toThrow(IpcRefused);
      expect(() => checkCall('estimate', ['Fox', ['dawn'], options], page)).toThrow(IpcRefused);
    }
  });
});

let sim: RunningSimulator | undefined;

interface TakeJson {
  take: number;
  picked: boolean;
  imageSeed: number | null;
  clipSeed: number | null;
  steps: { kind: string; taskId: number; reused: boolean }[];
}

const takesOf = async (dir: string) => JSON.parse((await cli(dir, 'takes', 'Fox', 'dawn', '--json')).out) as TakeJson[];
const taskOf = (take: TakeJson, kind: string) => take.steps.find((s) => s.kind === kind)!.taskId;
/** What the simulator charged since `from`, by kind. */
const chargedSince = (from: number) => {
  const kinds: Partial<Record<Kind, number>> = {};
  for (const c of sim!.charges.slice(from)) kinds[c.kind] = (kinds[c.kind] ?? 0) + 1;
  return kinds;
};

async function made(dir: string, ...args: string[]) {
  const generated = await cli(dir, ...args);
  expect(generated.code, generated.err).toBe(0);
  expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
  return generated;
}

/** Project Fox (two scenes) made once on a simulator of this test's. */
async function foxGenerated(): Promise<string> {
  sim = await simulatorForTest({ jobMs: 50 });
  const dir = tempDir();
  writeSettings(dir, { engine: { tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 100 } }, providers: { simulator: { baseUrl: sim.url } } });
  const file = join(dir, 'board.json');
  writeFileSync(file, JSON.stringify(TWO_SCENES));
  expect((await cli(dir, 'storyboard', 'create', 'Fox', '--file', file)).code).toBe(0);
  await made(dir, 'generate', 'Fox');
  return dir;
}

describe('studio generate --new-take --only', () => {
  it('a take of the clip only buys one clip and no image; of the image, a still and its clip; a pick and a set seed buy nothing again', async () => {
    const dir = await foxGenerated();

    let from = sim!.charges.length;
    const estimate = JSON.parse((await cli(dir, 'estimate', 'Fox', '--new-take', 'dawn', '--only', 'clip', '--json')).out) as { steps: { key: string; action: string }[] };
    expect(estimate.steps.filter((s) => s.action === 'new').map((s) => s.key)).toEqual(['dawn:clip', 'render']);
    expect((await made(dir, 'generate', 'Fox', '--new-take', 'dawn', '--only', 'clip')).out).toContain('dawn: take 2, picked for the render');
    expect(chargedSince(from)).toEqual({ clip: 1 });
    let [one, two] = await takesOf(dir);
    expect(taskOf(two!, 'image')).toBe(taskOf(one!, 'image'));
    expect(two!.steps.map((s) => [s.kind, s.reused])).toEqual([['image', true], ['clip', false], ['speech', true]]);
    expect(two!.imageSeed).toBe(one!.imageSeed);
    expect(two!.clipSeed).not.toBe(one!.clipSeed);
    const seeds = (await cli(dir, 'takes', 'Fox', 'dawn')).out.split('\n')[2];
    expect(seeds).toContain(`image ${one!.imageSeed}, clip ${two!.clipSeed}`);

    from = sim!.charges.length;
    await made(dir, 'generate', 'Fox', '--new-take', 'dawn', '--only', 'image');
    expect(chargedSince(from)).toEqual({ image: 1, clip: 1 });
    const three = (await takesOf(dir))[2]!;
    expect(three.imageSeed).not.toBe(one!.imageSeed);
    expect(three.clipSeed).toBe(two!.clipSeed);

    // Take 2 picked back: its still's seed is not its take number's, yet a Generate makes nothing new.
    from = sim!.charges.length;
    expect((await cli(dir, 'pick', 'Fox', 'dawn', '2')).code).toBe(0);
    expect((await made(dir, 'generate', 'Fox')).out).toContain('Nothing new to make');
    expect(sim!.charges.length).toBe(from);

    // A seed the person gives: the first time it is bought, the second time the same take is found, not bought.
    from = sim!.charges.length;
    await made(dir, 'generate', 'Fox', '--new-take', 'dawn', '--only', 'clip', '--seed', '42');
    expect(chargedSince(from)).toEqual({ clip: 1 });
    [one, two] = [(await takesOf(dir))[1]!, (await takesOf(dir))[3]!];
    expect([two.imageSeed, two.clipSeed]).toEqual([one.imageSeed, 42]);
    from = sim!.charges.length;
    expect((await made(dir, 'generate', 'Fox', '--new-take', 'dawn', '--only', 'clip', '--seed', '42')).out).toContain('Nothing new to make');
    expect(sim!.charges.length).toBe(from);
    expect(await takesOf(dir)).toHaveLength(4);

    const bad = await cli(dir, 'generate', 'Fox', '--new-take', 'dawn', '--only', 'sound');
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('a new take is of "clip" (the same still, a new clip), "image" (a new still and so a new clip) or "both", not "sound"');
  }, 60_000);
});

describe('studio generate --new-take --variations', () => {
  it('makes N takes of a scene in one Generate with one estimate and one budget check: N clips bought, the narration once', async () => {
    const dir = await foxGenerated();

    const estimate = JSON.parse((await cli(dir, 'estimate', 'Fox', '--new-take', 'dawn', '--only', 'clip', '--variations', '3', '--json')).out) as {
      steps: { key: string; action: string; cost: number }[];
      total: number;
      spent: number;
    };
    // Money in the JSON estimate is in micro-units of the currency.
    const bought = estimate.steps.filter((s) => s.action === 'new' && s.key !== 'render');
    expect(bought.map((s) => s.key)).toEqual(['dawn:clip', 'dawn:clip:variation-2', 'dawn:clip:variation-3']);
    expect(estimate.total).toBeCloseTo(bought.reduce((n, s) => n + s.cost, 0), 6);

    // A budget that holds two of the three is refused for all three: nothing is enqueued.
    expect((await cli(dir, 'budget', 'Fox', ((estimate.spent + bought[0]!.cost * 2.5) / 1e6).toFixed(4))).code).toBe(0);
    let from = sim!.charges.length;
    const refused = await cli(dir, 'generate', 'Fox', '--new-take', 'dawn', '--only', 'clip', '--variations', '3');
    expect(refused.code, refused.out).toBe(2);
    expect(refused.err).toContain('over the budget');
    expect((await cli(dir, 'budget', 'Fox', 'none')).code).toBe(0);

    const out = (await made(dir, 'generate', 'Fox', '--new-take', 'dawn', '--only', 'clip', '--variations', '3')).out;
    expect(out).toContain('dawn: take 2, picked for the render');
    expect(out).toContain('dawn: take 3, to compare');
    expect(out).toContain('dawn: take 4, to compare');
    expect(chargedSince(from)).toEqual({ clip: 3 });
    const takes = await takesOf(dir);
    expect(takes.map((t) => [t.take, t.picked])).toEqual([[1, false], [2, true], [3, false], [4, false]]);
    expect(new Set(takes.map((t) => taskOf(t, 'image'))).size).toBe(1);
    expect(new Set(takes.map((t) => taskOf(t, 'speech'))).size).toBe(1);
    expect(new Set(takes.map((t) => t.clipSeed)).size).toBe(4);

    // The next new take is past all of them: nothing of theirs is reused, one clip bought.
    from = sim!.charges.length;
    await made(dir, 'generate', 'Fox', '--new-take', 'dawn', '--only', 'clip');
    expect(chargedSince(from)).toEqual({ clip: 1 });
    const bad = await cli(dir, 'generate', 'Fox', '--new-take', 'dawn', '--variations', '9');
    expect(bad.err).toContain('--variations must be a whole number from 1 to 8');
  }, 60_000);
});
