import { describe, expect, it } from 'vitest';
import { FalAdapter } from '../main/providers/fal.ts';
import { estimateCost } from '../main/engine/estimator.ts';
import { estimateFromCatalogue } from '../main/pricing/catalogue.ts';
import { falQuote } from '../main/pricing/falQuote.ts';
import { falPricing } from './fakes/falPlatform.ts';
import { startFake } from './fakes/server.ts';

const DEV = 'fal-ai/flux/dev';
const SCHNELL = 'fal-ai/flux/schnell';
const KLING = 'fal-ai/kling-video/v2.1/standard/image-to-video';
const START = 'https://v3.fal.media/files/start.png';

/**
 * Each fal catalogue model at 2048x2048, 1920x1080 × 2 and its default size (Kling: 5 s, 10 s, and a studio length
 * of 7 s, sent as Kling's "10"), in micro-USD. fal's megapixel is 1024×1024 pixels, rounded up per image
 * (main/pricing/falQuote.ts): 2048² is 4, 1920×1080 is 2 (2,073,600 / 1,048,576 = 1.98), landscape_4_3 is 1.
 * Prices: FLUX.1 [dev] 0.025 and [schnell] 0.003 USD per megapixel; Kling 0.28 USD for 5 s, 0.056 per second more
 * (resources/prices.json, each with its page).
 */
const CASES: { model: string; kind: 'image' | 'clip'; size: string; input: Record<string, unknown>; micros: number }[] = [
  { model: DEV, kind: 'image', size: '2048x2048', input: { image_size: { width: 2048, height: 2048 } }, micros: 100_000 },
  { model: DEV, kind: 'image', size: '1920x1080 x 2', input: { image_size: { width: 1920, height: 1080 }, num_images: 2 }, micros: 100_000 },
  { model: DEV, kind: 'image', size: 'default (landscape_4_3)', input: {}, micros: 25_000 },
  { model: SCHNELL, kind: 'image', size: '2048x2048', input: { image_size: { width: 2048, height: 2048 } }, micros: 12_000 },
  { model: SCHNELL, kind: 'image', size: '1920x1080 x 2', input: { image_size: { width: 1920, height: 1080 }, num_images: 2 }, micros: 12_000 },
  { model: SCHNELL, kind: 'image', size: 'default (landscape_4_3)', input: {}, micros: 3_000 },
  { model: KLING, kind: 'clip', size: '5 s', input: { image_url: START, duration: 5 }, micros: 280_000 },
  { model: KLING, kind: 'clip', size: '10 s', input: { image_url: START, duration: 10 }, micros: 560_000 },
  { model: KLING, kind: 'clip', size: '7 s, sent as "10"', input: { image_url: START, duration: 7 }, micros: 560_000 },
  { model: KLING, kind: 'clip', size: 'default (5 s)', input: { image_url: START }, micros: 280_000 },
];

/** fal's answers, as its docs show them (unit "image" for FLUX.1 [dev]) and as seen live ("megapixels", "seconds"). */
const ANSWERS: Record<string, Record<string, { unit: string; unit_price: number }>> = {
  'as the docs example': { [DEV]: { unit: 'image', unit_price: 0.025 }, [SCHNELL]: { unit: 'image', unit_price: 0.003 }, [KLING]: { unit: 'video', unit_price: 0.28 } },
  'in megapixels and seconds': { [DEV]: { unit: 'megapixels', unit_price: 0.025 }, [SCHNELL]: { unit: 'megapixels', unit_price: 0.003 }, [KLING]: { unit: 'seconds', unit_price: 0.056 } },
};

describe("fal's price, scaled by resolution and length as fal bills it", () => {
  for (const [answered, prices] of Object.entries(ANSWERS)) {
    it.each(CASES)(`quote (fal answering ${answered}): $model at $size`, async ({ model, kind, input, micros }) => {
      const fake = await startFake(falPricing(prices));
      const fal = new FalAdapter({ key: 'fal-key-0123456789abcdef', baseUrl: fake.url });
      const request = fal.prepare({ kind, model, input: { prompt: 'a fox at dawn', ...input } });
      const estimate = await estimateCost(fal, request);
      expect(estimate).toMatchObject({ cost: micros, currency: 'USD' });
      expect(fake.count('GET', /^\/v1\/models\/pricing\?endpoint_id=/)).toBe(1);
    });
  }

  it.each(CASES)('catalogue: $model at $size', ({ model, kind, input, micros }) => {
    const fal = new FalAdapter({ key: 'fal-key-0123456789abcdef', baseUrl: null });
    const request = fal.prepare({ kind, model, input: { prompt: 'a fox at dawn', ...input } });
    expect(estimateFromCatalogue('fal', model, kind, request.input)).toMatchObject({ cost: micros, currency: 'USD' });
  });

  it('says how the quote was scaled, and leaves to the catalogue what a price per video cannot cover', async () => {
    const fake = await startFake(falPricing(ANSWERS['as the docs example']!));
    const fal = new FalAdapter({ key: 'fal-key-0123456789abcdef', baseUrl: fake.url });
    const big = await estimateCost(fal, fal.prepare({ kind: 'image', model: DEV, input: { prompt: 'x', image_size: { width: 2048, height: 2048 } } }));
    expect(big!.source).toBe(
      "fal quote at submit time: 1 image of 4 megapixels (rounded up to whole megapixels of 1024×1024 pixels) at 0.025 USD per megapixel (fal's price per image, scaled by resolution as the model's page bills it)",
    );
    const long = await estimateCost(fal, fal.prepare({ kind: 'clip', model: KLING, input: { prompt: 'x', image_url: START, duration: 10 } }));
    expect(long!.source).toMatch(/^catalogue: 10 seconds: 0\.28 USD for the first 5 and 0\.056 USD for each second beyond/);
  });

  it('prices a unit it cannot read by the catalogue, and an unknown model per megapixel, the higher reading', () => {
    expect(falQuote({ unit: 'compute_seconds', unitPrice: 0.001, currency: 'USD' }, 'image', {})).toBeNull();
    expect(falQuote({ unit: 'image', unitPrice: 0.04, currency: 'USD' }, 'image', { image_size: 'square_hd', num_images: 3 })).toMatchObject({ amount: 120_000 });
    expect(falQuote({ unit: 'image', unitPrice: 0.04, currency: 'USD' }, 'image', { image_size: { width: 1025, height: 1024 } })).toMatchObject({ amount: 80_000 });
  });
});
