import { describe, expect, it } from 'vitest';
import { estimateFromCatalogue } from '../main/pricing/catalogue.ts';
import { validateInput } from '../main/providers/registry.ts';

describe('catalogue estimates count every output asked for', () => {
  it('a Replicate image with num_outputs is priced per output image, as Replicate bills it', () => {
    // replicate.com/black-forest-labs/flux-schnell: "$3 per thousand output images"; num_outputs 1 to 4.
    const input = { prompt: 'a red fox', num_outputs: 4 };
    expect(() => validateInput('replicate', { kind: 'image', model: 'black-forest-labs/flux-schnell', input })).not.toThrow();
    expect(estimateFromCatalogue('replicate', 'black-forest-labs/flux-schnell', 'image', input)?.cost).toBe(12_000);
    expect(estimateFromCatalogue('replicate', 'black-forest-labs/flux-schnell', 'image', { prompt: 'a red fox' })?.cost).toBe(3_000);
  });
});
