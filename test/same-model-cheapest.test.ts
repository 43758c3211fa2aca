import { describe, expect, it } from 'vitest';
import type { CheapestView, EstimateView } from '../main/api/contract.ts';
import { mapOptions, madeBy } from '../main/providers/sameModelInputs.ts';
import { falQueue, realMedia, type Ledger } from './fakes/providers.ts';
import { replicateStandIn } from './fakes/replicateStandIn.ts';
import { send, startFake, type Route } from './fakes/server.ts';
import { cli } from './helpers/cli.ts';
import { writeSettings } from './helpers/processes.ts';
import { simulatorForTest } from './helpers/running.ts';
import { apiForTest } from './helpers/studioApi.ts';
import { tempDir } from './helpers/tmp.ts';
import { FAL_DEV_SQUARE } from './helpers/boards.ts';

/**
 * FLUX.1 [dev] is fal-ai/flux/dev at fal and black-forest-labs/flux-dev at Replicate (resources/prices.json
 * "sameModels"). With a key for both, the estimate prices a fal step at Replicate too, from the input Replicate would
 * be sent; one action moves it there, saving the storyboard only: the stand-ins are asked for prices and charge nothing.
 */

/** fal's pricing endpoint as fal documents it (GET /v1/models/pricing), at 0.05 USD a megapixel: above Replicate's 0.025 an image. */
function falPricedAt(unitPrice: number, next: Route): Route {
  return (req, res) =>
    req.path.startsWith('/v1/models/pricing') ? send(res, 200, { prices: [{ endpoint_id: 'fal-ai/flux/dev', unit_price: unitPrice, unit: 'megapixels', currency: 'USD' }] }) : next(req, res);
}

async function twoProviders(falPerMegapixel = 0.05) {
  const { png } = await realMedia();
  const ledger: Ledger = { charged: [] };
  const fal = await startFake(falPricedAt(falPerMegapixel, falQueue(ledger, png)));
  const replicate = replicateStandIn(png, { predictTime: () => 1, perImage: 0.025, perSecond: 0.001525 });
  const rep = await startFake(replicate.route);
  const sim = await simulatorForTest({ jobMs: 50 });
  const dir = tempDir();
  writeSettings(dir, {
    providers: { simulator: { baseUrl: sim.url }, fal: { baseUrl: fal.url, key: 'fal-key-0123456789' }, replicate: { baseUrl: rep.url, key: 'r8_0123456789abcdef0123456789' } },
  });
  const charges = () => ledger.charged.length + replicate.bills.length;
  const sent = () => [...fal.seen, ...rep.seen].filter((r) => r.method !== 'GET').length;
  return { dir, charges, sent, sim };
}


describe('the same model at the best price', () => {
  it('API: the estimate shows Replicate\'s price beside fal\'s for each FLUX.1 [dev] step; moving one scene saves the storyboard and buys nothing; a storyboard saved since is refused', async () => {
    const { dir, charges, sent } = await twoProviders();
    const call = await apiForTest(dir);
    await call('createProject', 'Fox');
    expect((await call('saveStoryboard', 'Fox', FAL_DEV_SQUARE)).status).toBe(200);

    const e = (await call<EstimateView>('estimate', 'Fox')).result;
    const dawn = e.steps.find((s) => s.key === 'dawn:image')!;
    expect(dawn).toMatchObject({ provider: 'fal', model: 'fal-ai/flux/dev', source: expect.stringMatching(/^fal quote/) });
    expect(dawn.cost).toBeGreaterThanOrEqual(0.05);
    // Replicate's catalogue price for one output image of the "1:1" aspect it would be sent, 1024x1024 like fal's.
    expect(dawn.offers).toEqual([
      {
        provider: 'replicate',
        model: 'black-forest-labs/flux-dev',
        family: 'FLUX.1 [dev]',
        cost: 0.025,
        currency: 'USD',
        source: expect.stringMatching(/^catalogue: 1 image at 0\.025 USD each/),
        sameSource: 'https://replicate.com/black-forest-labs/flux-dev (read 2026-12-02)',
        notOffered: null,
        scenes: ['dawn'],
        saving: dawn.cost! - 0.025,
      },
    ]);
    // A step made on the simulator has no same model elsewhere.
    expect(e.steps.find((s) => s.key === 'dawn:clip')!.offers).toBeUndefined();

    const stale = await call('moveToCheapest', 'Fox', { scene: 'dawn', revision: 0 });
    expect(stale.status).toBe(409);
    expect(stale.error).toMatch(/saved by someone else/);

    const revision = await call<number>('storyboardRevision', 'Fox');
    const moved = await call<CheapestView>('moveToCheapest', 'Fox', { scene: 'dawn', revision: revision.result });
    expect(moved.status).toBe(200);
    expect(moved.result.moves).toEqual([
      { scene: 'dawn', kind: 'image', from: { provider: 'fal', model: 'fal-ai/flux/dev' }, to: { provider: 'replicate', model: 'black-forest-labs/flux-dev' }, before: dawn.cost, after: 0.025, currency: 'USD' },
    ]);
    expect(moved.result.revision).toBe(revision.result + 1);
    expect(moved.result.total).toEqual({ before: e.total, after: e.total - (dawn.cost! - 0.025), currency: 'USD' });

    const board = (await call<{ scenes: { id: string; steps: Record<string, unknown> }[] }>('getStoryboard', 'Fox')).result;
    // fal's defaults written out where Replicate's differ: jpeg (Replicate's own is webp), unquantised (its go_fast is fp8).
    expect(board.scenes.find((s) => s.id === 'dawn')!.steps.image).toEqual({ provider: 'replicate', model: 'black-forest-labs/flux-dev', options: { output_format: 'jpg', go_fast: false } });
    expect(board.scenes.find((s) => s.id === 'dusk')!.steps.image).toBeUndefined();
    const after = (await call<EstimateView>('estimate', 'Fox')).result;
    expect(after.steps.find((s) => s.key === 'dawn:image')).toMatchObject({ provider: 'replicate', cost: 0.025 });
    // Replicate's step is offered back at fal, at fal's higher price: the move would not lower the total, so it is not offered.
    expect(after.steps.find((s) => s.key === 'dawn:image')!.offers).toMatchObject([{ provider: 'fal', saving: -(dawn.cost! - 0.025), notOffered: expect.stringMatching(/^moving scene dawn to fal would not lower the total/) }]);

    // The revision the first move was made from is no longer the storyboard's: the whole-storyboard move is refused.
    const again = await call('moveToCheapest', 'Fox', { revision: revision.result });
    expect(again.status).toBe(409);
    expect((await call<{ scenes: { id: string; steps: Record<string, unknown> }[] }>('getStoryboard', 'Fox')).result.scenes.find((s) => s.id === 'dusk')!.steps.image).toBeUndefined();

    expect(charges()).toBe(0);
    expect(sent()).toBe(0);
  }, 60_000);

  it('CLI: "storyboard cheapest" moves every scene, prints what each now costs, and buys nothing', async () => {
    const { dir, charges, sent } = await twoProviders();
    const file = `${dir}/board.json`;
    (await import('node:fs')).writeFileSync(file, JSON.stringify(FAL_DEV_SQUARE));
    expect((await cli(dir, 'storyboard', 'create', 'Fox', '--file', file)).code).toBe(0);
    const shown = await cli(dir, 'estimate', 'Fox');
    expect(shown.out).toMatch(/dawn:image: the same model \(FLUX\.1 \[dev\]\) at replicate black-forest-labs\/flux-dev: 0\.025 USD \(catalogue: .*\); cheaper: about 0\.025 USD less in all; move to it with "studio storyboard cheapest Fox --scene dawn"\./);

    const moved = await cli(dir, 'storyboard', 'cheapest', 'Fox');
    expect(moved.code).toBe(0);
    expect(moved.out).toMatch(/dawn image: fal fal-ai\/flux\/dev to replicate black-forest-labs\/flux-dev: about 0\.\d+ USD to 0\.025 USD/);
    expect(moved.out).toMatch(/dusk image: fal fal-ai\/flux\/dev to replicate black-forest-labs\/flux-dev/);
    expect(moved.out).toMatch(/Fox: storyboard saved, revision 2; the new steps now about .* against .*, about .* less\. Nothing was bought\./);
    const nothing = await cli(dir, 'storyboard', 'cheapest', 'Fox', '--revision', '1');
    expect(nothing.code).toBe(2);
    expect(nothing.err).toMatch(/saved by someone else since revision 1/);
    expect(charges()).toBe(0);
    expect(sent()).toBe(0);
  }, 60_000);
});

describe('a purchase several scenes share', () => {
  it('moves with every scene that shares it, saving what the whole plan says; a move back that would not lower the total is refused, saying why', async () => {
    const { dir, charges, sent } = await twoProviders();
    const call = await apiForTest(dir);
    await call('createProject', 'Twins');
    // The same prompt and seed: one picture bought once, used by both scenes (sameSteps.ts).
    const twins = { ...FAL_DEV_SQUARE, scenes: [{ id: 'a', imagePrompt: 'a fox', seed: 7, duration: 2, motionPrompt: 'walks' }, { id: 'b', imagePrompt: 'a fox', seed: 7, duration: 2, motionPrompt: 'sleeps' }] };
    expect((await call('saveStoryboard', 'Twins', twins)).status).toBe(200);
    const e = (await call<EstimateView>('estimate', 'Twins')).result;
    const a = e.steps.find((s) => s.key === 'a:image')!;
    expect(e.steps.find((s) => s.key === 'b:image')).toMatchObject({ provider: 'fal', cost: 0, source: 'the same as step a:image: bought once, used by both' });
    // Moving a alone would buy the picture twice (0.025 at Replicate and 0.05 at fal): the offer moves both, for a's price less Replicate's.
    expect(a.offers).toMatchObject([{ provider: 'replicate', cost: 0.025, scenes: ['a', 'b'], saving: a.cost! - 0.025, notOffered: null }]);

    // Asked for the sharing scene b, the move takes a with it.
    const moved = await call<CheapestView>('moveToCheapest', 'Twins', { scene: 'b', revision: 1 });
    expect(moved.status).toBe(200);
    expect(moved.result.moves.map((m) => [m.scene, m.to.provider, m.sharedWith])).toEqual([['a', 'replicate', undefined], ['b', 'replicate', 'a']]);
    expect(moved.result.total).toEqual({ before: e.total, after: e.total - (a.cost! - 0.025), currency: 'USD' });
    const board = (await call<{ scenes: { id: string; steps: Record<string, { provider: string }> }[] }>('getStoryboard', 'Twins')).result;
    expect(board.scenes.map((s) => s.steps.image?.provider)).toEqual(['replicate', 'replicate']);
    const after = (await call<EstimateView>('estimate', 'Twins')).result;
    const images = after.steps.filter((s) => s.kind === 'image');
    expect(images.map((s) => [s.key, s.provider, s.cost])).toEqual([['a:image', 'replicate', 0.025], ['b:image', 'replicate', 0]]);
    expect(images[1]!.source).toBe('the same as step a:image: bought once, used by both');
    expect(after.total).toBeCloseTo(e.total - (a.cost! - 0.025), 6);

    // Back to fal is dearer for the whole plan: not offered, and refused when asked for, the storyboard unchanged.
    expect(images[0]!.offers).toMatchObject([{ provider: 'fal', scenes: ['a', 'b'], notOffered: expect.stringMatching(/^moving scenes a and b to fal would not lower the total/) }]);
    const back = await call('moveToCheapest', 'Twins', { scene: 'a', revision: 2 });
    expect(back.status).toBe(400);
    expect(back.error).toMatch(/moving scenes a and b to fal would not lower the total: the new steps would come to about .* USD, against .* USD now\. The storyboard is unchanged\./);
    expect((await call<number>('storyboardRevision', 'Twins')).result).toBe(2);

    expect(charges()).toBe(0);
    expect(sent()).toBe(0);
  }, 60_000);
});

describe('a request written for the other provider', () => {
  it('maps num_images, the safety checker and the format both ways, and refuses what has no counterpart, saying why', () => {
    expect(mapOptions('fal', { provider: 'replicate', model: 'black-forest-labs/flux-dev' }, { num_images: 2, enable_safety_checker: false, output_format: 'png' })).toEqual({
      options: { num_outputs: 2, disable_safety_checker: true, output_format: 'png', go_fast: false },
    });
    expect(mapOptions('replicate', { provider: 'fal', model: 'fal-ai/flux/schnell' }, { num_outputs: 3, output_format: 'jpg', num_inference_steps: 4, go_fast: false })).toEqual({
      options: { num_images: 3, output_format: 'jpeg', num_inference_steps: 4, acceleration: 'none' },
    });
    expect(mapOptions('fal', { provider: 'replicate', model: 'black-forest-labs/flux-schnell' }, { num_inference_steps: 8 })).toEqual({ why: '"num_inference_steps" 8 is outside black-forest-labs/flux-schnell\'s 1 to 4' });
    expect(mapOptions('replicate', { provider: 'fal', model: 'fal-ai/flux/dev' }, { output_format: 'webp' })).toEqual({ why: 'its option "output_format" "webp" has no counterpart documented the same at fal' });
    expect(mapOptions('fal', { provider: 'replicate', model: 'black-forest-labs/flux-dev' }, { guidance_scale: 3.5 })).toEqual({ why: 'its option "guidance_scale" has no counterpart documented the same at Replicate' });
    expect(mapOptions('fal', { provider: 'replicate', model: 'black-forest-labs/flux-dev' }, { image_size: { width: 1344, height: 768 } })).toEqual({ options: { aspect_ratio: '16:9', output_format: 'jpg', go_fast: false } });
    expect(mapOptions('fal', { provider: 'replicate', model: 'black-forest-labs/flux-dev' }, { image_size: 'landscape_4_3' })).toEqual({
      why: 'its "image_size" asks for 1024x768, and Replicate\'s FLUX.1 makes only the sizes of its aspect ratios',
    });
    expect(madeBy('fal', { image_size: { width: 1920, height: 1080 }, num_images: 2 })).toEqual({ width: 1920, height: 1080, images: 2, format: 'jpeg' });
    expect(madeBy('replicate', { aspect_ratio: '16:9' })).toEqual({ width: 1344, height: 768, images: 1, format: 'webp' });
    expect(madeBy('replicate', { output_format: 'jpg' })).toMatchObject({ format: 'jpeg' });
  });

  it('a step with no options moved to Replicate is written with fal\'s defaults where Replicate\'s differ; Replicate\'s defaults, which fal cannot match, are not moved', () => {
    // fal: output_format "jpeg", acceleration "none" by default; Replicate: webp, output_quality 80, go_fast (fp8) true.
    for (const model of ['black-forest-labs/flux-dev', 'black-forest-labs/flux-schnell']) {
      expect(mapOptions('fal', { provider: 'replicate', model }, {})).toEqual({ options: { output_format: 'jpg', go_fast: false } });
    }
    expect(mapOptions('fal', { provider: 'replicate', model: 'black-forest-labs/flux-dev' }, { output_format: 'png', acceleration: 'none' })).toEqual({ options: { output_format: 'png', go_fast: false } });
    expect(mapOptions('fal', { provider: 'replicate', model: 'black-forest-labs/flux-dev' }, { acceleration: 'high' })).toEqual({ why: 'its option "acceleration" has no counterpart documented the same at Replicate' });
    expect(mapOptions('replicate', { provider: 'fal', model: 'fal-ai/flux/dev' }, {})).toEqual({ why: 'Replicate makes webp by default, and fal\'s FLUX.1 makes only jpeg or png' });
    expect(mapOptions('replicate', { provider: 'fal', model: 'fal-ai/flux/dev' }, { output_format: 'png' })).toEqual({ why: 'Replicate runs it fp8-quantised by default ("go_fast"), and fal documents no setting that runs it the same' });
    expect(mapOptions('replicate', { provider: 'fal', model: 'fal-ai/flux/dev' }, { output_format: 'png', go_fast: true })).toEqual({ why: 'its option "go_fast" has no counterpart documented the same at fal' });
  });

  it('a Replicate step left at its defaults is not offered at fal, even where fal is cheaper, and says why', async () => {
    const { dir, charges } = await twoProviders(0.005);
    const call = await apiForTest(dir);
    await call('createProject', 'Web');
    const board = { ...FAL_DEV_SQUARE, steps: { ...FAL_DEV_SQUARE.steps, image: { provider: 'replicate', model: 'black-forest-labs/flux-dev' } } };
    expect((await call('saveStoryboard', 'Web', board)).status).toBe(200);
    const dawn = (await call<EstimateView>('estimate', 'Web')).result.steps.find((s) => s.key === 'dawn:image')!;
    expect(dawn).toMatchObject({ provider: 'replicate', cost: 0.025 });
    expect(dawn.offers).toMatchObject([
      { provider: 'fal', model: 'fal-ai/flux/dev', notOffered: 'this step cannot be written the same for fal: Replicate makes webp by default, and fal\'s FLUX.1 makes only jpeg or png' },
    ]);
    expect((await call<CheapestView>('moveToCheapest', 'Web', { revision: 1 })).result).toMatchObject({ revision: 1, moves: [] });
    expect(charges()).toBe(0);
  }, 60_000);

  it('a frame Replicate cannot make exactly is priced there, and the move is not offered, saying what each would make', async () => {
    const { dir, charges } = await twoProviders();
    const call = await apiForTest(dir);
    await call('createProject', 'Wide');
    expect((await call('saveStoryboard', 'Wide', { ...FAL_DEV_SQUARE, width: 1920, height: 1080 })).status).toBe(200);
    const e = (await call<EstimateView>('estimate', 'Wide')).result;
    expect(e.steps.find((s) => s.key === 'dawn:image')!.offers).toMatchObject([
      { provider: 'replicate', cost: 0.025, notOffered: 'Replicate would make 1344x768 for this frame, not the 1920x1080 fal makes' },
    ]);
    const moved = await call<CheapestView>('moveToCheapest', 'Wide', { revision: 1 });
    expect(moved.result).toMatchObject({ revision: 1, moves: [] });
    expect(charges()).toBe(0);
  }, 60_000);
});
