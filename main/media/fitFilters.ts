import type { Fit } from '../domain/frameShape.ts';

/**
 * The filters that bring input `from` to exactly w x h, as label [to]: crop fills the frame and cuts what
 * overflows; pad fits it whole with black bars; blur fits it whole over a blurred, cropped copy of itself.
 */
export function fitFilters(from: string, to: string, fit: Fit, w: number, h: number): string[] {
  const cover = `scale=${w}:${h}:force_original_aspect_ratio=increase,crop=${w}:${h}`;
  const contain = `scale=${w}:${h}:force_original_aspect_ratio=decrease`;
  if (fit === 'crop') return [`${from}${cover},setsar=1[${to}]`];
  if (fit === 'pad') return [`${from}${contain},pad=${w}:${h}:(ow-iw)/2:(oh-ih)/2,setsar=1[${to}]`];
  return [
    `${from}split[${to}a][${to}b]`,
    `[${to}a]${cover},gblur=sigma=${Math.max(4, Math.round(Math.min(w, h) / 25))}[${to}bg]`,
    `[${to}b]${contain}[${to}fg]`,
    `[${to}bg][${to}fg]overlay=(W-w)/2:(H-h)/2,setsar=1[${to}]`,
  ];
}
