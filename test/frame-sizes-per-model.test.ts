import { describe, expect, it } from 'vitest';
import { GenerateRefused, Pipeline } from '../main/pipeline/generate.ts';
import { clipRefusal, KLING_STILL, REPLICATE_FLUX_ASPECTS, REPLICATE_FLUX_PIXELS, sizeFor } from '../main/providers/frameSizes.ts';
import { openProviders } from '../main/providers/registry.ts';
import { parseStoryboard } from '../main/providers/storyboards.ts';
import { openStudio } from '../main/studio.ts';
import { writeSettings } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';

/**
 * Each model is asked for the project's frame in a way its provider takes, for the sizes a creator may type: the
 * exact frame where the model takes any size, else the nearest size it makes (and the estimate says which, in
 * pixels), else a clear refusal before anything is bought. Sources beside each rule in main/providers/frameSizes.ts.
 */

const frame = (board: object) => parseStoryboard({ ...board, scenes: [{ imagePrompt: 'a fox' }] });

describe('sizes a creator may type', () => {
  it('refuses a frame no render can make, saying what to write', () => {
    expect(() => frame({ width: 1081, height: 1921 })).toThrow(/width: must be an even number \(H\.264 needs it\)/);
    expect(() => frame({ width: 100, height: 4000 })).toThrow(/height: must be a whole number from 64 to 3840/);
    // 4:5 with a short side of 1350: the long side rounded to an even number of pixels.
    expect(frame({ aspect: '4:5', resolution: 1350 })).toMatchObject({ width: 1350, height: 1688 });
  });
});

describe('fal FLUX', () => {
  it('takes any whole size from 1 to 14142 a side, so it is asked for the frame exactly', () => {
    for (const model of ['fal-ai/flux/dev', 'fal-ai/flux/schnell']) {
      for (const [w, h] of [[1350, 1688], [64, 3840], [3840, 64], [1080, 1920]] as const) {
        expect(sizeFor('fal', model, 'image', w, h)).toEqual({ input: { image_size: { width: w, height: h } }, made: null, note: null });
      }
    }
  });
});

describe('Replicate FLUX', () => {
  it('has the same aspects for flux-dev and flux-schnell, each with the pixels it makes, near its name', () => {
    expect(Object.keys(REPLICATE_FLUX_PIXELS).sort()).toEqual([...REPLICATE_FLUX_ASPECTS].sort());
    for (const [aspect, [w, h]] of Object.entries(REPLICATE_FLUX_PIXELS)) {
      const [a, b] = aspect.split(':').map(Number) as [number, number];
      expect(Math.abs(w / h / (a / b) - 1)).toBeLessThan(0.05);
    }
  });

  it('asks for the nearest aspect and says, in pixels, what it makes', () => {
    for (const model of ['black-forest-labs/flux-dev', 'black-forest-labs/flux-schnell']) {
      expect(sizeFor('replicate', model, 'image', 1350, 1688)).toEqual({
        input: { aspect_ratio: '4:5' },
        made: '896x1088',
        note: `${model} makes 896x1088 (its 4:5), the nearest of its sizes to 1350x1688; the render fits it to the frame`,
      });
      expect(sizeFor('replicate', model, 'image', 64, 3840)).toMatchObject({ input: { aspect_ratio: '9:21' }, made: '640x1536' });
      expect(sizeFor('replicate', model, 'image', 2520, 1080)).toMatchObject({ input: { aspect_ratio: '21:9' }, made: '1536x640' });
    }
  });
});

describe('OpenAI', () => {
  it('asks each model for the nearest of its own sizes', () => {
    expect(sizeFor('openai', 'gpt-image-1', 'image', 1350, 1688)).toMatchObject({ input: { size: '1024x1536' }, made: '1024x1536' });
    expect(sizeFor('openai', 'gpt-image-1-mini', 'image', 1350, 1688)).toMatchObject({ input: { size: '1024x1536' } });
    // DALL·E 3 has no 2:3: its square is nearer a 4:5 frame than its 1024x1792.
    expect(sizeFor('openai', 'dall-e-3', 'image', 1350, 1688)).toMatchObject({ input: { size: '1024x1024' } });
    expect(sizeFor('openai', 'dall-e-3', 'image', 64, 3840)).toMatchObject({ input: { size: '1024x1792' } });
    expect(sizeFor('openai', 'gpt-image-1', 'image', 3840, 64)).toMatchObject({ input: { size: '1536x1024' } });
  });
});

describe('Kling on fal, whose clip takes the still\'s shape', () => {
  const steps = (image: [string, string]) => [
    { kind: 'image', provider: image[0], model: image[1], action: 'new' },
    { kind: 'clip', provider: 'fal', model: 'fal-ai/kling-video/v2.1/standard/image-to-video', action: 'new' },
  ];
  const flux: [string, string] = ['fal', 'fal-ai/flux/dev'];

  it('is asked for no size of its own', () => {
    expect(sizeFor('fal', 'fal-ai/kling-video/v2.1/standard/image-to-video', 'clip', 1080, 1920).input).toEqual({});
  });

  it('refuses a frame whose still Kling would refuse, saying what to write; takes one within its limits', () => {
    expect(clipRefusal(steps(flux), 1080, 1920)).toBeNull();
    expect(clipRefusal(steps(flux), 1512, 640)).toBeNull();
    expect(clipRefusal(steps(flux), 640, 1600)).toBeNull();
    expect(clipRefusal(steps(flux), 600, 1600)).toMatch(
      /^fal-ai\/kling-video\/v2\.1\/standard\/image-to-video makes a clip from a still of at least 300 pixels a side and from 1:2\.5 to 2\.5:1, and this project's frame is 600x1600, so its stills would be refused; give the storyboard a frame within that/,
    );
    expect(clipRefusal(steps(flux), 280, 280)).toMatch(/frame is 280x280/);
    expect(KLING_STILL).toEqual({ minSide: 300, maxRatio: 2.5 });
  });

  it('takes any frame when the still comes in a size of the image model\'s own, or the clip is reused', () => {
    expect(clipRefusal(steps(['openai', 'gpt-image-1']), 64, 3840)).toBeNull();
    expect(clipRefusal(steps(['replicate', 'black-forest-labs/flux-dev']), 64, 3840)).toBeNull();
    expect(clipRefusal([steps(flux)[0]!, { ...steps(flux)[1]!, action: 'reuse' }], 64, 3840)).toBeNull();
  });

  it('refuses the estimate and Generate of such a project before anything is asked of fal, and enqueues nothing', async () => {
    const dataDir = tempDir();
    writeSettings(dataDir, { providers: { fal: { key: 'fal-key-0123456789', baseUrl: 'http://127.0.0.1:9' } } });
    const studio = await openStudio(dataDir);
    const providers = await openProviders(studio.settings, dataDir, {});
    try {
      const project = await studio.projects.ensure('Thin', Date.now());
      const board = { width: 200, height: 1000, steps: { image: { provider: 'fal', model: 'fal-ai/flux/dev' }, clip: { provider: 'fal', model: 'fal-ai/kling-video/v2.1/standard/image-to-video' } }, scenes: [{ imagePrompt: 'a fox', motionPrompt: 'push in' }] };
      await studio.storyboards.save(project.id, parseStoryboard(board), Date.now());
      const pipeline = new Pipeline({ studio, provider: providers.get, defaults: studio.settings.defaults });
      await expect(pipeline.estimate('Thin')).rejects.toThrow(GenerateRefused);
      await expect(pipeline.generate('Thin')).rejects.toThrow(/this project's frame is 200x1000, so its stills would be refused/);
      expect(await studio.tasks.list({ projectId: project.id })).toEqual([]);
    } finally {
      await providers.close();
      await studio.close();
    }
  });
});
