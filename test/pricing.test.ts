import { describe, expect, it } from 'vitest';
import { catalogue, entryFor, estimateFromCatalogue } from '../main/pricing/catalogue.ts';
import { ElevenLabsAdapter } from '../main/providers/elevenlabs.ts';
import { FalAdapter } from '../main/providers/fal.ts';
import { OpenAiAdapter } from '../main/providers/openai.ts';
import { OpenAiResponsesAdapter } from '../main/providers/openaiResponses.ts';
import type { ProviderAdapter } from '../main/providers/port.ts';
import { modelsOf, PROVIDER_IDS } from '../main/providers/registry.ts';
import { ReplicateAdapter } from '../main/providers/replicate.ts';
import type { Kind } from '../main/domain/tasks/model.ts';

const config = { key: 'k', baseUrl: 'http://127.0.0.1:9' };
const adapters: Record<string, ProviderAdapter> = {
  fal: new FalAdapter(config),
  replicate: new ReplicateAdapter(config),
  openai: new OpenAiAdapter(config),
  'openai-responses': new OpenAiResponsesAdapter(config),
  elevenlabs: new ElevenLabsAdapter(config),
  'elevenlabs at $0.12 per 1,000 credits': new ElevenLabsAdapter({ ...config, creditPrice: 0.00012 }),
};

/** The estimate of a task as its adapter prepares it, so each input is priced as it will be sent. */
function estimate(provider: string, kind: Kind, model: string, input: Record<string, unknown>): number | null {
  const adapter = adapters[provider]!;
  const request = adapter.prepare({ kind, model, input });
  return estimateFromCatalogue(adapter.id, request.model, request.kind, request.input, adapter.prices)?.cost ?? null;
}

const usd = (amount: number) => Math.round(amount * 1_000_000);
const text = (n: number) => 'a'.repeat(n);
const V = '21m00Tcm4TlvDq8ikWAM';

/**
 * [provider, kind, model, input, documented price in USD (null: no documented way to estimate), source].
 * "derived" rows are arithmetic on the documented rule; [3p] rows rest on third-party figures only.
 */
const ROWS: [string, Kind, string, Record<string, unknown>, number | null, string][] = [
  ['fal', 'image', 'fal-ai/flux/dev', { prompt: 'x' }, 0.025, 'fal.ai/docs flux-dev: "$0.025 per megapixel", rounded up; landscape_4_3 (the default) is 1 MP'],
  ['fal', 'image', 'fal-ai/flux/dev', { prompt: 'x', image_size: 'landscape_4_3', num_images: 4 }, 0.1, 'derived: 4 images of 1 MP at $0.025'],
  ['fal', 'image', 'fal-ai/flux/dev', { prompt: 'x', image_size: 'square_hd' }, 0.025, 'derived: 1024x1024 is 1 MP of 1024x1024 px (fal.ai/models/fal-ai/flux-2-flex/llms.txt: "a 1024x1024 image will cost $0.05" at $0.05/MP)'],
  ['fal', 'image', 'fal-ai/flux/dev', { prompt: 'x', image_size: { width: 1920, height: 1080 } }, 0.05, 'derived: 2,073,600 px is 2 MP (flux-2-flex llms.txt: "a 1920x1080 image will cost $0.10 (... × 2 megapixels)")'],
  ['fal', 'image', 'fal-ai/flux/schnell', { prompt: 'x', image_size: 'square' }, 0.003, 'fal.ai/docs flux-schnell: "$0.003 per megapixel", rounded up'],
  ['fal', 'clip', 'fal-ai/kling-video/v2.1/standard/image-to-video', { prompt: 'x', image_url: 'https://x/a.png', duration: 5 }, 0.28, 'fal llms.txt: "For 5s video your request will cost $0.28"'],
  ['fal', 'clip', 'fal-ai/kling-video/v2.1/standard/image-to-video', { prompt: 'x', image_url: 'https://x/a.png', duration: 7 }, 0.56, 'derived: 7 s is sent as "10": $0.28 + 5 x $0.056'],
  ['fal', 'clip', 'fal-ai/kling-video/v2.1/standard/image-to-video', { prompt: 'x', image_url: 'https://x/a.png' }, 0.28, 'fal llms.txt: duration defaults to "5"'],
  ['replicate', 'image', 'black-forest-labs/flux-schnell', { prompt: 'x' }, 0.003, 'replicate.com/black-forest-labs/flux-schnell: "$3 per thousand output images"'],
  ['replicate', 'image', 'black-forest-labs/flux-schnell', { prompt: 'x', num_outputs: 4 }, 0.012, 'derived: 4 outputs at $0.003'],
  ['replicate', 'image', 'black-forest-labs/flux-dev', { prompt: 'x' }, 0.025, '[3p] lumenfall.ai: $0.025 per image'],
  ['openai', 'image', 'gpt-image-1', { prompt: 'x', quality: 'high', size: '1536x1024' }, 0.25, 'developers.openai.com gpt-image-1: high 1536x1024 $0.25'],
  ['openai', 'image', 'gpt-image-1', { prompt: 'x', quality: 'low', size: '1024x1024' }, 0.011, 'developers.openai.com gpt-image-1: low 1024x1024 $0.011'],
  ['openai', 'image', 'gpt-image-1', { prompt: 'x' }, 0.042, 'sent as medium 1024x1024: $0.042'],
  ['openai', 'image', 'gpt-image-1', { prompt: 'x', quality: 'auto', n: 2 }, 0.334, 'derived: auto quality at its dearest, high 1024x1024 $0.167, x 2'],
  ['openai', 'image', 'gpt-image-1-mini', { prompt: 'x', quality: 'medium', size: '1024x1024' }, 0.011, 'developers.openai.com gpt-image-1-mini: medium 1024x1024 $0.011'],
  ['openai', 'image', 'gpt-image-1-mini', { prompt: 'x', quality: 'high', size: '1024x1536' }, 0.052, 'developers.openai.com gpt-image-1-mini: high 1024x1536 $0.052'],
  ['openai', 'image', 'dall-e-3', { prompt: 'x' }, 0.04, '[3p] kevinhermawan/Canvas model-info.json: standard 1024x1024 $0.04'],
  ['openai', 'image', 'dall-e-3', { prompt: 'x', quality: 'hd', size: '1792x1024' }, 0.12, '[3p] same: hd 1792x1024 $0.12'],
  ['openai', 'speech', 'tts-1', { text: text(4096) }, 0.06144, 'derived from developers.openai.com tts-1: $15 per 1M characters (a 3p bill shows $0.061425)'],
  ['openai', 'speech', 'tts-1-hd', { text: text(4096) }, 0.12288, 'derived: $30 per 1M characters'],
  ['openai', 'speech', 'gpt-4o-mini-tts', { text: text(100) }, null, 'billed by audio output tokens; no documented way to know how many'],
  ['openai-responses', 'draft', 'gpt-4.1-mini', { idea: text(400), scenes: 6 }, 0.0033572, '[3p] $0.40 / $1.60 per 1M tokens: 393 input tokens (1,571 characters sent, 4 a token) and the 2,000-token output cap (300 a scene and 200)'],
  ['elevenlabs', 'speech', 'eleven_multilingual_v2', { text: text(1000), voice_id: V }, 0.3, 'help.elevenlabs.io: 1 credit a character; [3p] Creator overage $0.30 per 1,000 credits (the default)'],
  ['elevenlabs', 'speech', 'eleven_flash_v2_5', { text: text(1000), voice_id: V }, 0.15, 'help.elevenlabs.io: "Flash and Turbo models cost 1 credit per 2 characters"'],
  ['elevenlabs at $0.12 per 1,000 credits', 'speech', 'eleven_turbo_v2_5', { text: text(1000), voice_id: V }, 0.06, 'derived: 500 credits at the plan price set'],
  ['elevenlabs at $0.12 per 1,000 credits', 'speech', 'eleven_v3', { text: text(1000), voice_id: V }, 0.12, 'derived: 1000 credits at the plan price set'],
];

describe('estimates follow each model\'s documented price', () => {
  it.each(ROWS)('%s %s %s %j → %s USD (%s)', (provider, kind, model, input, documented) => {
    expect(estimate(provider, kind, model, input)).toBe(documented === null ? null : usd(documented));
  });

  it('covers every catalogue model of a real provider with at least one row', () => {
    const covered = new Set(ROWS.map(([p, , m]) => `${adapters[p]!.id} ${m}`));
    for (const e of catalogue().filter((e) => e.provider !== 'simulator')) expect(covered, `${e.provider} ${e.model}`).toContain(`${e.provider} ${e.model}`);
  });

  it('says how it priced a step and where the figure comes from, third-party figures marked', () => {
    const request = adapters.fal!.prepare({ kind: 'image', model: 'fal-ai/flux/dev', input: { prompt: 'x', image_size: { width: 2048, height: 2048 } } });
    expect(estimateFromCatalogue('fal', request.model, request.kind, request.input)?.source).toBe(
      'catalogue: 4 megapixels (each image rounded up to whole megapixels of 1024×1024 pixels) at 0.025 USD per megapixel; https://fal.ai/docs/model-api-reference/image-generation-api/flux-dev, read 2026-12-02',
    );
    expect(estimateFromCatalogue('replicate', 'black-forest-labs/flux-dev', 'image', { prompt: 'x' })?.source).toContain('(a third-party figure)');
  });
});

describe('the catalogue', () => {
  it('has for every model an adapter declares an entry, or says plainly why it has no price', () => {
    for (const provider of PROVIDER_IDS) {
      for (const m of modelsOf(provider)) {
        const entry = entryFor(provider, m.id, m.kind);
        expect(entry, `${provider} ${m.id}`).toBeDefined();
        if (entry!.pricing.per === 'unknown') expect(entry!.pricing.why.length, `${provider} ${m.id}`).toBeGreaterThan(20);
      }
    }
  });

  it('gives every entry a source URL (the simulator aside), the date it was read and whether it is official', () => {
    for (const e of catalogue()) {
      if (e.provider !== 'simulator') expect(e.source, e.model).toMatch(/^https:\/\/\S+$/);
      expect(e.date, e.model).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(typeof e.official, e.model).toBe('boolean');
    }
  });

  it('notes the models OpenAI has retired, and keeps them usable', () => {
    for (const model of ['gpt-image-1', 'dall-e-3']) {
      expect(entryFor('openai', model, 'image')?.note, model).toMatch(/Retired/);
      expect(() => adapters.openai!.prepare({ kind: 'image', model, input: { prompt: 'x' } })).not.toThrow();
    }
  });
});
