import { describe, expect, it } from 'vitest';
import { estimateFromCatalogue } from '../main/pricing/catalogue.ts';
import { checkModel, modelsOf, PROVIDER_IDS, validateInput } from '../main/providers/registry.ts';

/** Models are declared by the adapters; nothing else is sent, nor priced as if it were a model the studio knows. */
describe('declared models', () => {
  it('every provider declares its models, each of a kind it makes', () => {
    for (const provider of PROVIDER_IDS) {
      const models = modelsOf(provider);
      expect(models.length, provider).toBeGreaterThan(0);
      for (const m of models) expect(() => checkModel(provider, m.kind, m.id)).not.toThrow();
    }
  });

  it('an unknown model is refused at enqueue, naming the closest and listing the known ones', () => {
    expect(() => validateInput('openai', { kind: 'speech', model: 'tts-2', input: { text: 'hi' } })).toThrow(
      'OpenAI has no speech model "tts-2"; did you mean "tts-1"? The speech models are tts-1, tts-1-hd, gpt-4o-mini-tts',
    );
    expect(() => validateInput('fal', { kind: 'speech', model: 'fal-ai/flux/dev', input: { text: 'hi' } })).toThrow('fal makes images and clips here, not speech');
  });

  it('takes a pinned Replicate version wherever a model is named, and keeps a long wrong name short in the message', () => {
    expect(() => checkModel('replicate', 'image', `black-forest-labs/flux-dev:${'a'.repeat(64)}`)).not.toThrow();
    const long = 'x'.repeat(100_000);
    let message = '';
    try {
      checkModel('openai', 'image', long);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message.length).toBeLessThan(300);
    expect(message).toMatch(/^OpenAI has no image model "x{77}…"/);
  });

  it('a model with no catalogue entry of its own has no estimate, rather than another model’s price', () => {
    expect(estimateFromCatalogue('fal', 'fal-ai/flux/pro', 'image', { prompt: 'x' })).toBeNull();
    expect(estimateFromCatalogue('elevenlabs', 'eleven_monolingual_v9', 'speech', { text: 'hello' })).toBeNull();
    expect(estimateFromCatalogue('simulator', 'sim-image-1', 'image', { prompt: 'x' })?.cost).toBe(40_000);
  });
});
