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
 * 9:16, 9:21" (replicate.com/black-forest-labs/flux-dev/api and flux-schnell/api, input schema).
 */
export const REPLICATE_FLUX_ASPECTS = ['1:1', '16:9', '21:9', '3:2', '2:3', '4:5', '5:4', '3:4', '4:3', '9:16', '9:21'] as const;

/**
 * How one model is asked for a frame of width x height, in the field its provider documents. A clip made
 * from a still takes the still's shape, so image-to-video models are sent no size of their own.
 */
export function sizeFor(provider: string, model: string, kind: StepKind, width: number, height: number): SizeChoice {
  // A 16:9 frame is what every project had before a project could choose its shape: its models are asked for nothing
  // new, so what they made then is the same step and reused as it is (never bought again), and the render fits it.
  if (kind === 'speech' || width * 9 === height * 16) return EXACT;
  if (provider === 'simulator') return { input: { width, height }, made: null, note: null };
  if (provider === 'fal') {
    // FLUX.1 takes `image_size` as a named size or `{width, height}` (fal-js libs/client/src/types/endpoints.ts,
    // FluxDevInput; main/pricing/imageSizes.ts has the bounds). Kling 2.1 image-to-video's input has no
    // size or aspect field: its frame follows the image (fal.ai/models/fal-ai/kling-video/v2.1/standard/image-to-video/api).
    return kind === 'image' ? { input: { image_size: { width, height } }, made: null, note: null } : EXACT;
  }
  if (provider === 'openai' && kind === 'image') return nearestSize(OPENAI_SIZES[model === 'dall-e-3' ? 'dall-e-3' : 'gpt']!, model, width, height);
  if (provider === 'replicate' && kind === 'image') {
    const aspect = nearest(REPLICATE_FLUX_ASPECTS, ratio, width, height);
    const exact = Math.abs(ratio(aspect) - width / height) < 0.01;
    return { input: { aspect_ratio: aspect }, made: aspect, note: exact ? null : `${model} makes ${aspect}, the nearest of its aspects to ${width}x${height}; the render fits it to the frame` };
  }
  return EXACT;
}
