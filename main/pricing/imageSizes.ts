/**
 * fal's named image sizes, in pixels (fal-ai/fal projects/fal/src/fal/toolkit/image/image.py,
 * IMAGE_SIZE_PRESETS); the FLUX.1 endpoints take these six or a `{width, height}` object, and default to
 * `landscape_4_3` (fal-js libs/client/src/types/endpoints.ts, FluxDevInput). A `{width, height}` side left
 * out is 512 (fal-js ImageSize), and each side is at most 14142 (image.py).
 */
export const FAL_IMAGE_SIZES: Readonly<Record<string, readonly [number, number]>> = {
  square_hd: [1024, 1024],
  square: [512, 512],
  portrait_4_3: [768, 1024],
  portrait_16_9: [576, 1024],
  landscape_4_3: [1024, 768],
  landscape_16_9: [1024, 576],
};

export const FAL_DEFAULT_IMAGE_SIZE = 'landscape_4_3';
export const FAL_SIZE_SIDE_DEFAULT = 512;
export const FAL_SIZE_SIDE_MAX = 14142;

/** The pixels of one image asked for by an `image_size` value (a name or `{width, height}`). */
export function falPixels(imageSize: unknown): number {
  if (imageSize && typeof imageSize === 'object') {
    const { width, height } = imageSize as { width?: unknown; height?: unknown };
    const side = (v: unknown) => (typeof v === 'number' && v > 0 ? v : FAL_SIZE_SIDE_DEFAULT);
    return side(width) * side(height);
  }
  const [w, h] = FAL_IMAGE_SIZES[typeof imageSize === 'string' ? imageSize : FAL_DEFAULT_IMAGE_SIZE] ?? FAL_IMAGE_SIZES[FAL_DEFAULT_IMAGE_SIZE]!;
  return w * h;
}

/**
 * fal's megapixel is 1024 × 1024 pixels. fal's own worked example: "a 1024x1024 image will cost $0.05, and a
 * 1920x1080 image will cost $0.10 (... × 2 megapixels)", "rounded up to the nearest megapixel"
 * (fal.ai/models/fal-ai/flux-2-flex/llms.txt, read 2026-12-02). With megapixels of 10^6 those would be 2 and 3.
 * The same page calls 512x512 "0.26 megapixels" (10^6 arithmetic), which rounds to the same 1 either way.
 */
export const FAL_MEGAPIXEL = 1024 * 1024;

/** Whole megapixels one image is billed for: its pixels rounded up to megapixels of 1024 × 1024 ("billed by rounding up to the nearest megapixel"). */
export function falMegapixelsPerImage(imageSize: unknown): number {
  return Math.ceil(falPixels(imageSize) / FAL_MEGAPIXEL);
}
