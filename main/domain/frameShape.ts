/** How a picture of another shape is brought to the project's frame. */
export type Fit = 'crop' | 'pad' | 'blur';

export const FITS: readonly Fit[] = ['crop', 'pad', 'blur'];

/** The aspect presets a project may name, as width:height. */
export const ASPECTS: Readonly<Record<string, readonly [number, number]>> = {
  '16:9': [16, 9],
  '9:16': [9, 16],
  '1:1': [1, 1],
  '4:5': [4, 5],
  '21:9': [21, 9],
};

export interface FrameShape {
  width: number;
  height: number;
  fit: Fit;
}

const SIDE_MIN = 64;
const SIDE_MAX = 3840;
const DEFAULT_RESOLUTION = 720;

type Fail = (where: string, what: string) => never;

/** H.264 with 4:2:0 colour needs even sides. */
const evenNearest = (n: number) => Math.max(2, Math.round(n / 2) * 2);

function side(v: unknown, where: string, fallback: number, fail: Fail): number {
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < SIDE_MIN || v > SIDE_MAX) fail(where, `must be a whole number from ${SIDE_MIN} to ${SIDE_MAX}`);
  if (v % 2 !== 0) fail(where, 'must be an even number (H.264 needs it)');
  return v;
}

/**
 * The project's frame from `width` and `height`, or from `aspect` and `resolution` (the short side, as in
 * "1080p"), and how pictures of another shape fill it (`fit`, crop by default so no frame has bars).
 */
export function readFrameShape(v: Record<string, unknown>, fail: Fail): FrameShape {
  const fit = v.fit === undefined ? 'crop' : (v.fit as Fit);
  if (!FITS.includes(fit)) fail('fit', `must be one of ${FITS.map((f) => `"${f}"`).join(', ')}`);
  if (v.aspect === undefined) {
    if (v.resolution !== undefined) fail('resolution', 'goes with "aspect" (like "aspect": "9:16", "resolution": 1080); or give "width" and "height" alone');
    return { width: side(v.width, 'width', 1280, fail), height: side(v.height, 'height', 720, fail), fit };
  }
  if (v.width !== undefined || v.height !== undefined) fail('aspect', 'is given with "width" or "height"; give either "aspect" (with "resolution") or "width" and "height"');
  const ratio = typeof v.aspect === 'string' ? ASPECTS[v.aspect] : undefined;
  if (!ratio) fail('aspect', `must be one of ${Object.keys(ASPECTS).map((a) => `"${a}"`).join(', ')}`);
  const r = v.resolution ?? DEFAULT_RESOLUTION;
  if (typeof r !== 'number' || !Number.isInteger(r) || r < SIDE_MIN || r > 2160) fail('resolution', `must be a whole number from ${SIDE_MIN} to 2160 (the short side, like 720 or 1080)`);
  const [a, b] = ratio;
  const short = evenNearest(r);
  const long = evenNearest((r * Math.max(a, b)) / Math.min(a, b));
  if (long > SIDE_MAX) fail('resolution', `makes a long side of ${long}, over ${SIDE_MAX}; choose a smaller one`);
  return a >= b ? { width: long, height: short, fit } : { width: short, height: long, fit };
}
