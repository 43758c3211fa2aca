import type { StepKind } from '../domain/storyboard.ts';

/** The input fields that ask a model for the project's shape, and what it will make. */
export interface SizeChoice {
  input: Record<string, unknown>;
  /** The shape the model makes, in its own words ("1024x1536"), or null for exactly the project's. */
  made: string | null;
  /** Said in the estimate when the model cannot make the project's exact shape; null when it can. */
  note: string | null;
}

const EXACT: SizeChoice = { input: {}, made: null, note: null };

/** The choice whose width:height is nearest the project's, by the log of the ratios so 2:1 and 1:2 are as far from 1:1. */
function nearest<T>(choices: readonly T[], ratioOf: (c: T) => number, width: number, height: number): T {
  const want = Math.log(width / height);
  return choices.reduce((best, c) => (Math.abs(Math.log(ratioOf(c)) - want) < Math.abs(Math.log(ratioOf(best)) - want) ? c : best));
}

const sides = (size: string) => size.split('x').map(Number) as [number, number];
const ratio = (aspect: string) => {
  const [a, b] = aspect.split(':').map(Number) as [number, number];
  return a / b;
};

function nearestSize(sizes: readonly string[], model: string, width: number, height: number): SizeChoice {
  const size = nearest(sizes, (s) => sides(s)[0] / sides(s)[1], width, height);
  const exact = sides(size)[0] * height === sides(size)[1] * width;
  return { input: { size }, made: size, note: exact ? null : `${model} makes ${size}, the nearest of its sizes to ${width}x${height}; the render fits it to the frame` };
}

/**
 * OpenAI image sizes per model (openai-node src/resources/images.ts, ImageGenerateParamsBase `size`):
 * "1024x1024, 1536x1024 (landscape), 1024x1536 (portrait), or auto" for the GPT image models, "one of
 * 1024x1024, 1792x1024, or 1024x1792 for dall-e-3".
 */
const OPENAI_SIZES: Record<string, readonly string[]> = {
  'dall-e-3': ['1024x1024', '1792x1024', '1024x1792'],
  gpt: ['1024x1024', '1536x1024', '1024x1536'],
};

/**
 * Replicate's FLUX.1 models take `aspect_ratio`, one of "1:1, 16:9, 21:9, 3:2, 2:3, 4:5, 5:4, 3:4, 4:3,
 * 9:16, 9:21" (replicate.com/black-forest-labs/flux-dev/api and flux-schnell/api, input schema), the same list
 * for both: Replicate's own build of the two models shares one input (replicate/cog-flux predict.py,
 * `Inputs.aspect_ratio`, choices `ASPECT_RATIOS`), which also gives the pixels each makes at its default 1
 * megapixel. Those are on a 64-pixel grid, so even "9:16" is 768x1344, not an exact 9:16.
 */
export const REPLICATE_FLUX_PIXELS: Readonly<Record<string, readonly [number, number]>> = {
  '1:1': [1024, 1024],
  '16:9': [1344, 768],
  '21:9': [1536, 640],
  '3:2': [1216, 832],
  '2:3': [832, 1216],
  '4:5': [896, 1088],
  '5:4': [1088, 896],
  '3:4': [896, 1152],
  '4:3': [1152, 896],
  '9:16': [768, 1344],
  '9:21': [640, 1536],
};
export const REPLICATE_FLUX_ASPECTS = ['1:1', '16:9', '21:9', '3:2', '2:3', '4:5', '5:4', '3:4', '4:3', '9:16', '9:21'] as const;

/**
 * Kling's image-to-video takes a still "at least 300x300 px" with an aspect ratio "between 1:2.5 and 2.5:1"
 * (Kling's API reference for image to video, as its partner node documents it: docs.comfy.org, Kling Image to
 * Video, `start_frame`). fal's endpoint has no size field: its clip takes the still's shape
 * (fal.ai/models/fal-ai/kling-video/v2.1/standard/image-to-video/api, input `image_url` only).
 */
export const KLING_STILL = { minSide: 300, maxRatio: 2.5 } as const;

/** The models whose clip takes the still's shape and refuses a still outside Kling's limits. */
export const isKling = (provider: string, model: string) => provider === 'fal' && model.startsWith('fal-ai/kling-video/');

/** Whether Kling takes a still of this size (KLING_STILL). */
export const klingTakes = (width: number, height: number) =>
  Math.min(width, height) >= KLING_STILL.minSide && Math.max(width, height) / Math.min(width, height) <= KLING_STILL.maxRatio;

/**
 * How one model is asked for a frame of width x height, in the field its provider documents. A clip made
 * from a still takes the still's shape, so image-to-video models are sent no size of their own.
 */
export function sizeFor(provider: string, model: string, kind: StepKind, width: number, height: number): SizeChoice {
  if (kind === 'speech') return EXACT;
  if (provider === 'simulator') return { input: { width, height }, made: null, note: null };
  if (provider === 'fal') {
    // FLUX.1 takes `image_size` as a named size or `{width, height}` (fal-js libs/client/src/types/endpoints.ts,
    // FluxDevInput; main/pricing/imageSizes.ts has the bounds). Kling 2.1 image-to-video's input has no
    // size or aspect field: its frame follows the image (fal.ai/models/fal-ai/kling-video/v2.1/standard/image-to-video/api).
    return kind === 'image' ? { input: { image_size: { width, height } }, made: null, note: null } : EXACT;
  }
  if (provider === 'openai' && kind === 'image') return nearestSize(OPENAI_SIZES[model === 'dall-e-3' ? 'dall-e-3' : 'gpt']!, model, width, height);
  if (provider === 'replicate' && kind === 'image') {
    // Chosen by the aspect's name, as before, so what a project bought is asked for the same way; said in pixels.
    const aspect = nearest(REPLICATE_FLUX_ASPECTS, ratio, width, height);
    const [w, h] = REPLICATE_FLUX_PIXELS[aspect]!;
    const made = `${w}x${h}`;
    return { input: { aspect_ratio: aspect }, made, note: `${model} makes ${made} (its ${aspect}), the nearest of its sizes to ${width}x${height}; the render fits it to the frame` };
  }
  return EXACT;
}

/**
 * A clip model that cannot take the still a step of this frame makes, in plain words saying what to write
 * instead; null when every new clip can. Only a still in the frame's own shape can be outside Kling's limits:
 * every fixed size of OpenAI's and Replicate's models is within them.
 */
export function clipRefusal(steps: ReadonlyArray<{ kind: string; provider: string; model: string; action: string }>, width: number, height: number): string | null {
  const kling = steps.find((s) => s.kind === 'clip' && s.action !== 'reuse' && isKling(s.provider, s.model));
  const framed = steps.some((s) => s.kind === 'image' && (s.provider === 'fal' || s.provider === 'simulator'));
  if (!kling || !framed || klingTakes(width, height)) return null;
  return (
    `${kling.model} makes a clip from a still of at least ${KLING_STILL.minSide} pixels a side and from 1:${KLING_STILL.maxRatio} to ` +
    `${KLING_STILL.maxRatio}:1, and this project's frame is ${width}x${height}, so its stills would be refused; give the storyboard ` +
    `a frame within that (like "aspect": "9:16" or "21:9" with "resolution": 720)`
  );
}
