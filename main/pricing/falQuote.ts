/**
 * fal's quote scaled to the request, as fal documents it. GET /v1/models/pricing gives one `unit_price` per
 * endpoint, "per image/video with proportional adjustments for resolution/length", and says "Custom pricing or
 * discounts may be applied based on account status" (fal.ai/docs/platform-apis/v1/models/pricing.md, read
 * 2026-12-02): so where the quote can express the request it is this account's own price and applies; where it
 * cannot (a unit it does not explain, a clip length it does not cover), the catalogue's formula does.
 */
import type { Kind } from '../domain/tasks/model.ts';
import { toMicros } from '../domain/tasks/model.ts';
import type { CatalogueEntry } from './catalogue.ts';
import { falMegapixelsPerImage } from './imageSizes.ts';

/** One price line of fal's pricing answer. */
export interface FalPrice {
  unit: string;
  unitPrice: number;
  currency: string;
}

export interface FalQuote {
  /** Micro-units of `currency`. */
  amount: number;
  currency: string;
  how: string;
}

type FalUnit = 'image' | 'megapixel' | 'second' | 'video';

/** fal's unit names, singular or plural (its docs name 'image' and 'video'; live answers have been seen with 'megapixels'). */
const UNITS: Record<string, FalUnit> = {
  image: 'image',
  images: 'image',
  megapixel: 'megapixel',
  megapixels: 'megapixel',
  second: 'second',
  seconds: 'second',
  video_second: 'second',
  video_seconds: 'second',
  video: 'video',
  videos: 'video',
};

export function imageCount(input: Record<string, unknown>): number {
  return typeof input.num_images === 'number' ? input.num_images : 1;
}

/** The seconds a clip asks for as sent (Kling takes "5" or "10"), else the catalogue's included length, else 5. */
export function clipSeconds(input: Record<string, unknown>, entry?: CatalogueEntry): number {
  const d = typeof input.duration === 'string' ? Number(input.duration) : input.duration;
  if (typeof d === 'number' && Number.isFinite(d)) return d;
  return entry?.pricing.per === 'clip' ? entry.pricing.seconds : 5;
}

/**
 * How many of fal's `unit` one request is billed for, read the one way this studio reads that unit for this model
 * (the quote below and the bills of falBills.ts alike); null where the unit cannot express the request. `entry` is
 * the catalogue's entry for the model: its rule, read from the model's own page, says whether a unit of 'image' is a
 * flat price per image or a price per megapixel; with no entry, per megapixel, the higher. A price per video is for
 * the length the model's page prices; any other length it cannot express.
 */
export function falQuantity(unitName: string, kind: Kind, input: Record<string, unknown>, entry?: CatalogueEntry): number | null {
  const unit = UNITS[unitName.toLowerCase()];
  if (kind === 'image') {
    if (unit === 'image' && entry?.pricing.per === 'image') return imageCount(input);
    if (unit === 'image' || unit === 'megapixel') return falMegapixelsPerImage(input.image_size) * imageCount(input);
  }
  if (kind === 'clip') {
    const s = clipSeconds(input, entry);
    if (unit === 'second') return s;
    if (unit === 'video' && entry?.pricing.per === 'clip' && s === entry.pricing.seconds) return 1;
  }
  return null;
}

function howOf(price: FalPrice, kind: Kind, input: Record<string, unknown>, entry?: CatalogueEntry): string {
  const at = `${price.unitPrice} ${price.currency}`;
  const unit = UNITS[price.unit.toLowerCase()];
  if (kind === 'clip') {
    const s = clipSeconds(input, entry);
    return unit === 'second' ? `${s} seconds at ${at} per second` : `a ${s}-second video at ${at}`;
  }
  const n = imageCount(input);
  const images = `${n} image${n === 1 ? '' : 's'}`;
  if (unit === 'image' && entry?.pricing.per === 'image') return `${images} at ${at} each`;
  const each = falMegapixelsPerImage(input.image_size);
  const said = unit === 'megapixel' ? 'per megapixel' : "per megapixel (fal's price per image, scaled by resolution as the model's page bills it)";
  return `${images} of ${each} megapixel${each === 1 ? '' : 's'} (rounded up to whole megapixels of 1024×1024 pixels) at ${at} ${said}`;
}

/** The quote for one request, or null where fal's price line cannot express it (then the catalogue answers). */
export function falQuote(price: FalPrice, kind: Kind, input: Record<string, unknown>, entry?: CatalogueEntry): FalQuote | null {
  if (!Number.isFinite(price.unitPrice) || price.unitPrice < 0) return null;
  const quantity = falQuantity(price.unit, kind, input, entry);
  if (quantity === null) return null;
  return { amount: toMicros(price.unitPrice * quantity), currency: price.currency, how: howOf(price, kind, input, entry) };
}
