import { unlinkSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { ModelView, PlanStepView, ProviderView, ScenePlanView } from '../main/api/contract.ts';
import { startRuntime, type Runtime } from '../main/runtime.ts';
import { startSimulator, type RunningSimulator } from '../main/simulator/server.ts';
import { writeSettings } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';

let runtime: Runtime | undefined;
let sim: RunningSimulator | undefined;
afterEach(async () => {
  await runtime?.stop();
  await sim?.close();
  runtime = sim = undefined;
});

/** The engine and the StudioApi on a real data folder, its provider a simulator this test holds. */
async function start(jobMs: number, settings: object = {}) {
  sim = await startSimulator({ jobMs });
  const dir = tempDir();
  writeSettings(dir, { engine: { tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 100 } }, providers: { simulator: { baseUrl: sim.url }, fal: { key: 'fal-test-key' } }, ...settings });
  runtime = await startRuntime(dir, { mediaUrl: (id) => `/media/${id}` });
  return runtime;
}

async function eventually<T>(read: () => Promise<T>, holds: (value: T) => boolean, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (holds(value)) return value;
    if (Date.now() > end) throw new Error(`never held; last: ${JSON.stringify(value, null, 1).slice(0, 3000)}`);
    await new Promise((r) => setTimeout(r, 40));
  }
}

const model = (providers: ProviderView[], provider: string, id: string): ModelView => providers.find((p) => p.id === provider)!.models.find((m) => m.id === id)!;
const step = (plan: ScenePlanView, key: string): PlanStepView => [...plan.scenes.flatMap((s) => s.steps), plan.render!].find((s) => s.key === key)!;

describe('listModels', () => {
  it('lists every provider, a missing key as such, each model with its price, its source and the options it takes', async () => {
    const { service } = await start(50, { prices: { 'openai gpt-4o-mini-tts': 0.01 } });
    const { providers, defaults } = await service.listModels();
    expect(providers.map((p) => p.id)).toEqual(['simulator', 'fal', 'replicate', 'openai', 'elevenlabs']);
    const keys = Object.fromEntries(providers.map((p) => [p.id, p.key]));
    // A provider without a key is listed all the same: the UI says "add a key in Settings".
    expect(keys).toMatchObject({ simulator: 'none needed', fal: 'settings', replicate: null, openai: null, elevenlabs: null });
    expect(defaults.image).toEqual({ provider: 'simulator', model: 'sim-image-1' });

    const flux = model(providers, 'fal', 'fal-ai/flux/dev');
    expect(flux).toMatchObject({ kind: 'image', title: 'FLUX.1 [dev]', price: '0.025 USD per megapixel' });
    // The catalogue's FLUX figure is from fal's own page, and fal is asked for a quote as well.
    expect(flux.priceSource).toMatch(/fal\.ai\/docs\/model-api-reference\/image-generation-api\/flux-dev, read 2026-12-02; fal is asked for a quote/);
    expect(flux.options.map((o) => o.name)).toEqual(['image_size', 'num_images', 'output_format', 'acceleration', 'enable_safety_checker']);
    const size = flux.options.find((o) => o.name === 'image_size')!.shape;
    expect(size.type === 'either' && size.of.map((s) => s.type)).toEqual(['string', 'object']);
    expect(flux.takes.find((t) => t.startsWith('image_size'))).toMatch(/square_hd.*; or width 1 to \d+, height 1 to \d+/);

    const kling = model(providers, 'fal', 'fal-ai/kling-video/v2.1/standard/image-to-video');
    expect(kling.price).toBe('0.28 USD for the first 5 seconds, 0.056 USD for each second beyond');
    expect(kling.takes.find((t) => t.startsWith('duration'))).toMatch(/5, 10/);
    expect(kling.options.map((o) => o.name)).not.toContain('duration');

    const gpt = model(providers, 'openai', 'gpt-image-1');
    expect(gpt.price).toBe('0.011 to 0.25 USD per image, by quality and size');
    expect(gpt.options.find((o) => o.name === 'quality')!.shape).toEqual({ type: 'string', oneOf: ['low', 'medium', 'high', 'auto'] });
    expect(model(providers, 'openai', 'tts-1').options.find((o) => o.name === 'voice')!.shape).toMatchObject({ type: 'string', oneOf: expect.arrayContaining(['alloy', 'nova']) });
    expect(model(providers, 'openai', 'tts-1').price).toBe('0.015 USD per 1,000 characters');
    // A model billed in a way the studio cannot foresee is "price unknown" with the reason, unless the person priced it.
    expect(model(providers, 'openai', 'gpt-4o-mini-tts')).toMatchObject({ price: '0.01 USD per request', priceSource: 'your price for openai gpt-4o-mini-tts (settings "prices")' });
    expect(model(providers, 'replicate', 'black-forest-labs/flux-dev').priceSource).toMatch(/third-party/);

    const eleven = model(providers, 'elevenlabs', 'eleven_multilingual_v2');
    expect(eleven.options).toEqual([{ name: 'voice_id', required: true, hint: 'an ElevenLabs voice id', shape: { type: 'string' } }]);
    expect(eleven.price).toBe('0.3 USD per 1,000 characters (1 credit a character at 0.0003 USD a credit)');
    expect(eleven.priceSource).toMatch(/no plan set in settings, so the Creator plan's .*; pick your plan in settings/);
  });

  it('says "price unknown" and why for a model the catalogue cannot price', async () => {
    const { service } = await start(50);
    const tts = model((await service.listModels()).providers, 'openai', 'gpt-4o-mini-tts');
    expect(tts.price).toBeNull();
    expect(tts.priceSource).toMatch(/^price unknown: gpt-4o-mini-tts is billed by tokens/);
  });
});

describe('scenePlan', () => {
  it('maps the storyboard to its steps per scene: waiting for what, at the provider, ready, and a paid result lost', async () => {
    const { service, studio } = await start(600);
    await service.createProject('Fox');
    expect(await service.scenePlan('Fox')).toEqual({ scenes: [], render: null, videoReady: null });
    await service.saveStoryboard('Fox', {
      scenes: [
        { id: 'dawn', imagePrompt: 'a fox asleep in snow', narration: 'At dawn, the fox wakes.', duration: 1 },
        { id: 'dusk', imagePrompt: 'the fox trotting home', duration: 1 },
      ],
    });
    const before = await service.scenePlan('Fox');
    expect(before.scenes.map((s) => [s.id, s.steps.map((x) => `${x.label}: ${x.state}`)])).toEqual([
      ['dawn', ['image of dawn: not generated', 'clip of dawn: not generated', 'narration of dawn: not generated']],
      ['dusk', ['image of dusk: not generated', 'clip of dusk: not generated']],
    ]);
    expect(before.render).toMatchObject({ label: 'the finished video', state: 'not generated', task: null });

    const started = await service.generate('Fox');
    expect(started.steps.filter((s) => s.action === 'new')).toHaveLength(6);
    // The clip waits for its image, and says so by name, here and on the task board.
    const waiting = await eventually(() => service.scenePlan('Fox'), (p) => step(p, 'dawn:clip').state === 'waiting');
    expect(step(waiting, 'dawn:clip').waitingFor).toEqual(['image of dawn']);
    expect(step(waiting, 'dawn:clip').task!.waitingFor).toEqual(['image of dawn']);
    expect(step(waiting, 'render').waitingFor).toEqual(['clip of dawn', 'narration of dawn', 'clip of dusk']);
    const tasks = (await service.listTasks('Fox', 0, 50)).tasks;
    expect(tasks.find((t) => t.id === step(waiting, 'dawn:clip').task!.id)!.waitingFor).toEqual(['image of dawn']);

    const atProvider = await eventually(() => service.scenePlan('Fox'), (p) => step(p, 'dawn:image').state === 'at the provider');
    expect(step(atProvider, 'dawn:image').task).toMatchObject({ status: 'SUBMITTED', kind: 'image' });

    const done = await eventually(() => service.scenePlan('Fox'), (p) => p.render?.state === 'ready', 60_000);
    for (const s of done.scenes.flatMap((x) => x.steps)) {
      expect(s.state).toBe('ready');
      expect(s.task!.outputUrl).toBe(`/media/${s.task!.id}`);
      expect(s.waitingFor).toEqual([]);
    }
    expect(done.render!.task!.outputUrl).toMatch(/^\/media\/\d+$/);

    // The narration's file and the video are gone: the narration was paid for, and is shown so; the video is to make again.
    unlinkSync(studio.media.resolve((await studio.tasks.get(step(done, 'dawn:speech').task!.id))!.outputPath!));
    unlinkSync(studio.media.resolve((await studio.tasks.get(done.render!.task!.id))!.outputPath!));
    const lost = await service.scenePlan('Fox');
    expect(step(lost, 'dawn:speech')).toMatchObject({ state: 'paid, result lost', lost: { paid: 'yes', why: 'its output file is gone' } });
    expect(lost.render!.state).toBe('not generated');
    expect(step(lost, 'dawn:image').state).toBe('ready');
  }, 90_000);
});
