/**
 * The same FLUX.1 request written for another provider: a step's options mapped field by field between fal and
 * Replicate, and what each request makes, so a switch is offered only where the other provider makes the same
 * picture. Pure. A field with no counterpart whose meaning is documented the same at both is never guessed at.
 */
import { FAL_DEFAULT_IMAGE_SIZE, FAL_IMAGE_SIZES, FAL_SIZE_SIDE_DEFAULT } from '../pricing/imageSizes.ts';
import { REPLICATE_FLUX_PIXELS } from './frameSizes.ts';

export type Mapped = { options: Record<string, unknown> } | { why: string };

/** What a request makes: each image's pixels and how many images. */
export interface Made {
  width: number;
  height: number;
  images: number;
  /** The file format, by fal's name for it (jpeg, png) or Replicate's webp. */
  format: string;
}

/**
 * num_inference_steps ranges: fal FLUX.1 [dev] "Range: 1 to 50" and [schnell] "Range: 1 to 12"
 * (fal.ai/docs/model-api-reference/image-generation-api/flux-dev and flux-schnell); Replicate's flux-schnell "Min: 1
 * Max: 4" (replicate.com/black-forest-labs/flux-schnell/api). Replicate's flux-dev range is not stated where it was
 * read, so steps are not mapped to it.
 */
const STEPS: Record<string, readonly [number, number]> = {
  'fal-ai/flux/dev': [1, 50],
  'fal-ai/flux/schnell': [1, 12],
  'black-forest-labs/flux-schnell': [1, 4],
};

/**
 * Output formats: fal's FLUX.1 takes "jpeg, png" (the pages above); Replicate's "webp, jpg, png" (its API pages),
 * so webp has no counterpart at fal.
 */
const FAL_FORMAT: Record<string, string> = { jpg: 'jpeg', png: 'png' };
const REPLICATE_FORMAT: Record<string, string> = { jpeg: 'jpg', png: 'png' };

/**
 * Defaults that differ, so a move writes them out. fal's FLUX.1 [dev] and [schnell] (one input type): output_format
 * "Default value: `\"jpeg\"`", acceleration "Default value: `\"none\"`" (fal-js libs/client/src/types/endpoints.ts
 * FluxDevInput; FluxSchnellInput = FluxDevInput). Replicate's flux-dev and flux-schnell: output_format default webp,
 * output_quality 80, go_fast True, "Run faster predictions with model optimized for speed (currently fp8 quantized);
 * disable to run in original bf16" (replicate.com/black-forest-labs/flux-schnell/versions/c846a699.../api, and
 * replicate.com/black-forest-labs/flux-dev/api). So fal's default is Replicate's jpg with go_fast false, and
 * Replicate's default webp and fp8 have no counterpart at fal. fal documents no JPEG quality, so output_quality has
 * no faithful value to write and is left to Replicate.
 */
const FAL_DEFAULT_FORMAT = 'jpeg';
const REPLICATE_DEFAULT_FORMAT = 'webp';

/** Fields the planner writes itself, the same at both: the scene's prompt and seed. */
const CARRIED = ['prompt', 'seed'];

function steps(value: unknown, model: string, provider: string): Mapped | { value: number } {
  const range = STEPS[model];
  if (!range) return { why: `"num_inference_steps" is set, and ${provider}'s ${model} documents no range for it here` };
  if (typeof value !== 'number' || value < range[0] || value > range[1]) return { why: `"num_inference_steps" ${JSON.stringify(value)} is outside ${model}'s ${range[0]} to ${range[1]}` };
  return { value };
}

/** A fal step's options as Replicate's FLUX.1 takes them. */
function falToReplicate(options: Record<string, unknown>, model: string): Mapped {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options)) {
    if (CARRIED.includes(key)) out[key] = value;
    else if (key === 'num_images') out.num_outputs = value;
    else if (key === 'enable_safety_checker') out.disable_safety_checker = value === false;
    else if (key === 'output_format' && typeof value === 'string' && REPLICATE_FORMAT[value]) out.output_format = REPLICATE_FORMAT[value];
    else if (key === 'acceleration' && value === 'none') out.go_fast = false;
    else if (key === 'num_inference_steps') {
      const mapped = steps(value, model, 'Replicate');
      if ('why' in mapped) return mapped;
      out.num_inference_steps = (mapped as { value: number }).value;
    } else if (key === 'image_size') {
      const [w, h] = falSize(value);
      const aspect = Object.entries(REPLICATE_FLUX_PIXELS).find(([, [pw, ph]]) => pw === w && ph === h)?.[0];
      if (!aspect) return { why: `its "image_size" asks for ${w}x${h}, and Replicate's FLUX.1 makes only the sizes of its aspect ratios` };
      out.aspect_ratio = aspect;
    } else return { why: `its option "${key}" has no counterpart documented the same at Replicate` };
  }
  // fal's defaults, written where Replicate's own would make another picture: jpeg, from the model unquantised.
  return { options: { output_format: REPLICATE_FORMAT[FAL_DEFAULT_FORMAT], go_fast: false, ...out } };
}

/** A Replicate step's options as fal's FLUX.1 takes them. */
function replicateToFal(options: Record<string, unknown>, model: string): Mapped {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options)) {
    if (CARRIED.includes(key)) out[key] = value;
    else if (key === 'num_outputs') out.num_images = value;
    else if (key === 'disable_safety_checker') out.enable_safety_checker = value !== true;
    else if (key === 'output_format' && typeof value === 'string' && FAL_FORMAT[value]) out.output_format = FAL_FORMAT[value];
    else if (key === 'megapixels' && value === '1') continue;
    else if (key === 'go_fast' && value === false) out.acceleration = 'none';
    else if (key === 'num_inference_steps') {
      const mapped = steps(value, model, 'fal');
      if ('why' in mapped) return mapped;
      out.num_inference_steps = (mapped as { value: number }).value;
    } else if (key === 'aspect_ratio' && typeof value === 'string' && REPLICATE_FLUX_PIXELS[value]) {
      const [width, height] = REPLICATE_FLUX_PIXELS[value]!;
      out.image_size = { width, height };
    } else return { why: `its option "${key}"${typeof value === 'string' ? ` "${value}"` : ''} has no counterpart documented the same at fal` };
  }
  if (options.output_format === undefined) return { why: `Replicate makes ${REPLICATE_DEFAULT_FORMAT} by default, and fal's FLUX.1 makes only jpeg or png` };
  if (options.go_fast === undefined) return { why: 'Replicate runs it fp8-quantised by default ("go_fast"), and fal documents no setting that runs it the same' };
  return { options: out };
}

/** A step's options for the same model at another provider, or why they cannot be written faithfully there. */
export function mapOptions(from: string, to: { provider: string; model: string }, options: Record<string, unknown> = {}): Mapped {
  if (from === 'fal' && to.provider === 'replicate') return falToReplicate(options, to.model);
  if (from === 'replicate' && to.provider === 'fal') return replicateToFal(options, to.model);
  return { why: `no mapping of inputs from ${from} to ${to.provider} is known` };
}

/** Each side of a fal `image_size`: a named size, or `{width, height}` with a side left out at 512 (imageSizes.ts). */
function falSize(imageSize: unknown): [number, number] {
  if (imageSize && typeof imageSize === 'object') {
    const { width, height } = imageSize as { width?: unknown; height?: unknown };
    const side = (v: unknown) => (typeof v === 'number' && v > 0 ? v : FAL_SIZE_SIDE_DEFAULT);
    return [side(width), side(height)];
  }
  const named = FAL_IMAGE_SIZES[typeof imageSize === 'string' ? imageSize : FAL_DEFAULT_IMAGE_SIZE] ?? FAL_IMAGE_SIZES[FAL_DEFAULT_IMAGE_SIZE]!;
  return [named[0], named[1]];
}

/**
 * What a FLUX.1 request makes. fal: its `image_size`, `landscape_4_3` by default (imageSizes.ts). Replicate: its
 * `aspect_ratio` at the default 1 megapixel, "1:1" by default (frameSizes.ts; replicate.com/black-forest-labs/flux-dev/api).
 * The format by the defaults above.
 */
export function madeBy(provider: string, input: Record<string, unknown>): Made | null {
  const images = (key: string) => (typeof input[key] === 'number' ? (input[key] as number) : 1);
  if (provider === 'fal') {
    const [width, height] = falSize(input.image_size);
    return { width, height, images: images('num_images'), format: typeof input.output_format === 'string' ? input.output_format : FAL_DEFAULT_FORMAT };
  }
  if (provider === 'replicate') {
    if (input.megapixels !== undefined && input.megapixels !== '1') return null;
    const pixels = REPLICATE_FLUX_PIXELS[typeof input.aspect_ratio === 'string' ? input.aspect_ratio : '1:1'];
    const format = typeof input.output_format === 'string' ? (FAL_FORMAT[input.output_format] ?? input.output_format) : REPLICATE_DEFAULT_FORMAT;
    return pixels ? { width: pixels[0], height: pixels[1], images: images('num_outputs'), format } : null;
  }
  return null;
}
