import { execFile } from 'node:child_process';
import { unlinkSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ffmpegPath, ffprobePath } from '../main/media/binaries.ts';
import { probe } from '../main/media/probe.ts';
import { cancelTask } from '../main/engine/decisions.ts';
import { GenerateRefused, Pipeline } from '../main/pipeline/generate.ts';
import { LostResultsRefused } from '../main/pipeline/refusals.ts';
import { parseStoryboard } from '../main/providers/storyboards.ts';
import type { Providers } from '../main/providers/registry.ts';
import type { RunningSimulator } from '../main/simulator/server.ts';
import type { Studio } from '../main/studio.ts';
import { simulatedStudio } from './helpers/simulatedStudio.ts';

const run = promisify(execFile);

export const THREE_SCENES = {
  width: 320,
  height: 180,
  fps: 24,
  scenes: [
    { id: 'dawn', imagePrompt: 'a fox asleep in snow', motionPrompt: 'push in', narration: 'At dawn, the fox wakes.', duration: 2 },
    { id: 'hunt', imagePrompt: 'the fox listening', motionPrompt: 'hold', narration: 'It listens.', duration: 1.5 },
    { id: 'home', imagePrompt: 'the fox going home', motionPrompt: 'track', duration: 1 },
  ],
};

let sim: RunningSimulator;
let studio: Studio;
let providers: Providers;

async function setup(board: unknown = THREE_SCENES) {
  const s = await simulatedStudio({
    jobMs: 100,
    settings: (url) => ({ engine: { tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 100 } }, providers: { simulator: { baseUrl: url } } }),
  });
  ({ sim, studio, providers } = s);
  const project = await studio.projects.ensure('Fox', Date.now());
  await studio.storyboards.save(project.id, parseStoryboard(board), Date.now());
  const pipeline = new Pipeline({ studio, provider: providers.get, defaults: studio.settings.defaults });
  const work = s.work;
  const edit = async (change: (b: typeof THREE_SCENES) => void) => {
    const b = structuredClone(THREE_SCENES);
    change(b);
    await studio.storyboards.save(project.id, parseStoryboard(b), Date.now());
  };
  return { project, pipeline, work, edit };
}

describe('from storyboard to finished clip', () => {
  it('makes a playable MP4 of the whole storyboard, one video and one audio stream, at the chosen size', async () => {
    const { pipeline, work } = await setup();
    const plan = await pipeline.generate('Fox');
    expect(plan.steps.map((s) => s.key)).toEqual(['dawn:image', 'dawn:clip', 'dawn:speech', 'hunt:image', 'hunt:clip', 'hunt:speech', 'home:image', 'home:clip', 'render']);
    await work();

    const render = (await studio.tasks.list()).find((t) => t.kind === 'render')!;
    expect(render.status).toBe('SUCCEEDED');
    const file = studio.media.resolve(render.outputPath!);
    const p = await probe(file);
    // Each narrated scene lasts at least its narration, as measured, and half a second more.
    const speech = (await studio.tasks.list()).filter((t) => t.kind === 'speech');
    const spoken = async (text: string) => (await probe(studio.media.resolve(speech.find((t) => (t.input as { text: string }).text === text)!.outputPath!))).durationSec!;
    const expected = Math.max(2, (await spoken('At dawn, the fox wakes.')) + 0.5) + Math.max(1.5, (await spoken('It listens.')) + 0.5) + 1;
    expect(Math.abs(p.durationSec! - expected)).toBeLessThanOrEqual(2 / 24);
    expect(p.video).toMatchObject({ codec: 'h264', width: 320, height: 180 });
    expect(p.audio).toMatchObject({ codec: 'aac' });
    // Decoding the whole file with no error is what playable means here.
    const decoded = await run(ffmpegPath(), ['-v', 'error', '-i', file, '-f', 'null', '-']);
    expect(decoded.stderr).toBe('');
    const streams = await run(ffprobePath(), ['-v', 'error', '-show_entries', 'stream=codec_type', '-of', 'csv=p=0', file]);
    // The picture, the sound, the narration's subtitles as a track to turn on, and the scenes' chapter list.
    expect(streams.stdout.trim().split('\n')).toEqual(['video', 'audio', 'subtitle', 'data']);
    expect(sim.charges).toHaveLength(8);
  });

  it('reuses every paid result it already has: a second Generate buys nothing', async () => {
    const { pipeline, work } = await setup();
    await pipeline.generate('Fox');
    await work();
    const again = await pipeline.generate('Fox');
    expect(again.steps.every((s) => s.action === 'reuse')).toBe(true);
    expect(again.total).toBe(0);
    await work();
    expect(sim.charges).toHaveLength(8);
  });

  it('editing one scene regenerates only that scene’s changed step and the render', async () => {
    const { pipeline, work, edit } = await setup();
    await pipeline.generate('Fox');
    await work();
    // Words changed, not added: the narration still fits the scene, so its clip is the same step (see clip-length.test.ts).
    await edit((b) => (b.scenes[1]!.narration = 'It waits.'));
    const plan = await pipeline.generate('Fox');
    expect(plan.steps.filter((s) => s.action === 'new').map((s) => s.key)).toEqual(['hunt:speech', 'render']);
    await work();
    expect(sim.charges).toHaveLength(9);
  });

  it('a new take of a scene buys its image and clip again, and keeps the take for later', async () => {
    const { project, pipeline, work } = await setup();
    await pipeline.generate('Fox');
    await work();
    const plan = await pipeline.generate('Fox', { newTakes: ['hunt'] });
    expect(plan.steps.filter((s) => s.action === 'new').map((s) => s.key)).toEqual(['hunt:image', 'hunt:clip', 'render']);
    await work();
    expect(sim.charges).toHaveLength(10);
    expect((await studio.storyboards.get(project.id))!.scenes[1]!.take).toBe(2);
    expect((await pipeline.generate('Fox')).steps.every((s) => s.action === 'reuse')).toBe(true);
  });

  it('refuses a Generate over budget, saying by how much, and enqueues nothing', async () => {
    const { project, pipeline } = await setup();
    await studio.projects.setBudget(project.id, 500_000);
    const err = await pipeline.generate('Fox').catch((e) => e);
    expect(err).toBeInstanceOf(GenerateRefused);
    // 3 images at 0.04, 5.5 s of clip at 0.10 (dawn's clip 3 s, to cover its narration), 34 characters of speech at 0.0002.
    expect(err.message).toMatch(/about 0\.6768 USD.*0\.1768 USD over the budget of 0\.50 USD/);
    expect(await studio.tasks.list()).toEqual([]);
  });

  it('counts what an earlier Generate enqueued and has not sent yet against the budget', async () => {
    const { project, pipeline } = await setup();
    await studio.projects.setBudget(project.id, 700_000);
    const first = await pipeline.generate('Fox');
    expect((await studio.tasks.spend(project.id))[0]!.queued).toBe(first.total);
    const err = await pipeline.generate('Fox', { newTakes: ['dawn'] }).catch((e) => e);
    expect(err).toBeInstanceOf(GenerateRefused);
    expect(err.message).toMatch(/0\.6768 USD already spent, possibly charged or enqueued/);
    expect(await studio.tasks.list()).toHaveLength(9);
  });

  it('lists a step cancelled after it was sent as possibly paid, and buys it again only when confirmed', async () => {
    const { pipeline } = await setup();
    await pipeline.generate('Fox');
    const lease = { owner: 'w', now: Date.now() };
    const [image] = await studio.tasks.claim('image', 1, 60_000, lease);
    await studio.tasks.markSubmitStarted(image!.id, 'k', 60_000, lease);
    await cancelTask(studio.tasks, undefined, image!.id, Date.now());
    const err = await pipeline.generate('Fox').catch((e) => e);
    expect(err).toBeInstanceOf(LostResultsRefused);
    expect(err.message).toMatch(new RegExp(`dawn:image was possibly paid, result lost: task ${image!.id} .*cancelled after it was sent`));
    const again = await pipeline.generate('Fox', { rebuyLost: true });
    expect(again.steps.find((s) => s.key === 'dawn:image')!.action).toBe('rebuy');
  });

  it('never sends a task that would take the project past its budget, counting possibly charged work', async () => {
    const { project, work } = await setup();
    await studio.projects.setBudget(project.id, 100_000);
    for (let i = 0; i < 4; i++) {
      await studio.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt: `fox ${i}` } }, Date.now());
    }
    await work();
    const tasks = await studio.tasks.list();
    expect(tasks.filter((t) => t.status === 'SUCCEEDED')).toHaveLength(2);
    const refused = tasks.filter((t) => t.status === 'FAILED');
    expect(refused).toHaveLength(2);
    expect(refused[0]).toMatchObject({ charged: 'no' });
    expect(refused[0]!.error).toMatch(/past its budget/);
    expect(sim.charges).toHaveLength(2);
  });

  it('two Generates at once buy each step once: the later one reuses what the earlier enqueued', async () => {
    const { pipeline, work } = await setup();
    const [a, b] = await Promise.all([pipeline.generate('Fox'), pipeline.generate('Fox')]);
    expect(await studio.tasks.list()).toHaveLength(9);
    const later = [a, b].find((e) => e.steps.every((s) => s.action === 'reuse'))!;
    expect(later.total).toBe(0);
    expect(later.steps[0]!.source).toMatch(/enqueued by another Generate while this one was being priced/);
    await work();
    expect(sim.charges).toHaveLength(8);
  });

  it('never buys again a step whose paid result file is gone unless asked, and says what it cost', async () => {
    const { pipeline, work } = await setup();
    await pipeline.generate('Fox');
    await work();
    const made = await studio.tasks.list();
    const clip = made.find((t) => t.kind === 'clip' && (t.input as { prompt: string }).prompt === 'hold')!;
    unlinkSync(studio.media.resolve(clip.outputPath!));
    unlinkSync(studio.media.resolve(made.find((t) => t.kind === 'render')!.outputPath!));

    const estimate = await pipeline.estimate('Fox');
    expect(estimate.steps.filter((s) => s.action !== 'reuse').map((s) => [s.key, s.action])).toEqual([
      ['hunt:clip', 'rebuy'],
      ['render', 'new'],
    ]);
    expect(estimate.steps.find((s) => s.key === 'hunt:clip')!.lost).toEqual({
      taskId: clip.id,
      paid: 'yes',
      cost: clip.costActual,
      currency: 'USD',
      why: 'its output file is gone',
      looked: [studio.media.resolve(clip.outputPath!)],
    });
    expect(estimate.total).toBe(150_000);

    const refused = await pipeline.generate('Fox').catch((e) => e);
    expect(refused).toBeInstanceOf(LostResultsRefused);
    expect(refused.message).toMatch(/hunt:clip was paid, result lost: task \d+ cost \d+\.\d{2,6} USD \(its output file is gone\).*nothing was enqueued/);
    expect(await studio.tasks.list()).toHaveLength(made.length);

    const confirmed = await pipeline.generate('Fox', { rebuyLost: true });
    expect(confirmed.steps.filter((s) => s.action === 'rebuy').map((s) => s.taskId)).toEqual([made.length + 1]);
    await work();
    expect(sim.charges).toHaveLength(9);
    expect((await studio.tasks.list()).find((t) => t.kind === 'render' && t.id > made.length)!.status).toBe('SUCCEEDED');
  });

  it('does not buy a lost image again when everything made from it is kept', async () => {
    const { pipeline, work } = await setup();
    await pipeline.generate('Fox');
    await work();
    const image = (await studio.tasks.list()).find((t) => t.kind === 'image')!;
    unlinkSync(studio.media.resolve(image.outputPath!));
    const estimate = await pipeline.estimate('Fox');
    expect(estimate.steps.every((s) => s.action === 'reuse')).toBe(true);
    expect(estimate.steps[0]!.source).toMatch(/its output file is gone, but every step made from it is kept/);
  });

  it('a result the provider charged for and then lost (expired) is a rebuy, never a silent new purchase', async () => {
    const { pipeline, work } = await setup({ ...THREE_SCENES, scenes: [{ id: 'dawn', imagePrompt: 'a fox asleep in snow', motionPrompt: 'push in', duration: 2 }] });
    sim.setFaults({ job: ['expired-result'] });
    await pipeline.generate('Fox');
    await work();
    const image = (await studio.tasks.list()).find((t) => t.kind === 'image')!;
    expect(image).toMatchObject({ status: 'FAILED', charged: 'yes' });
    expect(sim.charges).toHaveLength(1);

    const estimate = await pipeline.estimate('Fox');
    expect(estimate.steps.map((s) => s.action)).toEqual(['rebuy', 'new', 'new']);
    expect(estimate.steps[0]!.lost).toMatchObject({ taskId: image.id, paid: 'yes', why: image.error });
    await expect(pipeline.generate('Fox')).rejects.toThrow(LostResultsRefused);
    await pipeline.generate('Fox', { rebuyLost: true });
    await work();
    expect(sim.charges).toHaveLength(3);
  });

  it('says which scene and field of a storyboard is wrong', () => {
    expect(() => parseStoryboard({ scenes: [{ imagePrompt: 'x', duration: 0 }] })).toThrow('scene 1 ("scene-1") duration: must be a number from 0.5 to 60');
    expect(() => parseStoryboard({ scenes: [{ id: 'a', imagePrompt: 'x' }, { id: 'a', imagePrompt: 'y' }] })).toThrow(/same id as an earlier scene/);
    expect(() => parseStoryboard({ width: 641, scenes: [{ imagePrompt: 'x' }] })).toThrow(/width: must be an even number/);
    expect(() => parseStoryboard({ scenes: [{ imagePrompt: 'x', steps: { video: {} } }] })).toThrow(/"video" is not a step|video: is not a step/);
  });
});
