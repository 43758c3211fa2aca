import { createHash } from 'node:crypto';
import { closest } from './closest.ts';
import { SCENE_FITS, type SceneFit } from './sceneLength.ts';
import { readFrameShape, type Fit } from './frameShape.ts';
import { isAbsoluteAnywhere } from './storedPaths.ts';
import { FINISHING_FIELDS, readFinishing, readMotion, readTransition, readTrim, type Motion, type Music, type Subtitles, type Transition, type Trim } from './finishing.ts';

/** Which provider and model make one kind of step, with any provider-specific input (a voice id, say). */
export interface StepChoice {
  provider: string;
  model: string;
  options?: Record<string, unknown>;
}

export type StepKind = 'image' | 'clip' | 'speech';

/**
 * A still or clip the creator brings instead of one bought: a file (copied into the project at Generate, its checksum
 * kept here so the original may move), a finished task of the studio, or what a take (of this scene, or `scene`) made.
 */
export type OwnMedia = { file: string; sha256?: string; name?: string } | { task: number } | { take: number; scene?: string };
export type OwnImage = OwnMedia;
export type OwnClip = OwnMedia;

export interface Scene {
  id: string;
  imagePrompt: string;
  motionPrompt: string;
  narration: string | null;
  /** Seconds of the finished video this scene fills. */
  duration: number;
  seed: number;
  /** Raised by "new take": a new seed, so nothing is reused. */
  take: number;
  /** The seed of the scene's image or clip when a take set its own (a new take of the clip only keeps the still's). */
  imageSeed?: number;
  clipSeed?: number;
  steps: Partial<Record<StepKind, StepChoice>>;
  /** "narration" (default): the scene lasts as long as its narration and a short tail; "scene": it keeps `duration`. */
  fit: SceneFit;
  /** The creator's own still: nothing is bought for the scene's image, and its clip is made from this one. */
  image?: OwnImage;
  /** The creator's own clip: nothing is bought for the scene's image or clip; the render uses this one. */
  clip?: OwnClip;
  /** The cut from this scene to the next; absent, the storyboard's. */
  transition?: Transition;
  /** The scene shows its still with this move, and no clip is bought for it. */
  motion?: Motion;
  /** The part of the scene's clip it shows. */
  trim?: Trim;
}

export interface Storyboard {
  width: number;
  height: number;
  /** How a still or clip of another shape fills the frame. */
  fit: Fit;
  fps: number;
  steps: Partial<Record<StepKind, StepChoice>>;
  scenes: Scene[];
  /** The finishing (see finishing.ts), each absent when it is the default: a plain cut, no burned subtitles, no music, -14 LUFS. */
  transition?: Transition;
  subtitles?: Subtitles;
  music?: Music;
  loudness?: number;
}

export class StoryboardError extends Error {}

/**
 * The providers and models a step may name. The studio's own (main/providers/storyboards.ts) is built from the
 * providers' registry, which sits above this layer; without one, a step's provider and model are read as text.
 */
export interface StepCatalogue {
  providers: readonly string[];
  isProvider(id: string): boolean;
  /** Why this provider cannot make this kind of step with this model, or null when it can. */
  modelProblem(provider: string, kind: StepKind, model: string): string | null;
}

const STEP_KINDS: StepKind[] = ['image', 'clip', 'speech'];
const SCENE_FIELDS = ['id', 'imagePrompt', 'motionPrompt', 'narration', 'duration', 'seed', 'take', 'imageSeed', 'clipSeed', 'steps', 'fit', 'image', 'clip', 'transition', 'motion', 'trim'];

function fail(where: string, what: string): never {
  throw new StoryboardError(`${where}: ${what}`);
}

/** The most scenes a storyboard takes: a short clip, not a feature film, and a bound on what one Generate buys. */
export const MAX_SCENES = 200;

function text(v: unknown, where: string, required: boolean): string | null {
  if (typeof v === 'string' && v.trim() === '' && v !== '') {
    if (required) fail(where, 'is required, and only spaces are no text');
    return null;
  }
  if (v === undefined || v === null || v === '') {
    if (required) fail(where, 'is required');
    return null;
  }
  if (typeof v !== 'string') fail(where, 'must be text');
  return v.trim();
}

/** Edit distance, to name the field a misspelt one was meant to be. */
/** A field the studio does not know is refused, naming the one it was most likely meant to be. */
function onlyKnown(value: Record<string, unknown>, known: readonly string[], where: string): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) fail(where, `has no field "${key}"; did you mean "${closest(key, known)}"? The fields are ${known.join(', ')}`);
  }
}

function num(v: unknown, where: string, min: number, max: number, fallback: number, integer = false): number {
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max || (integer && !Number.isInteger(v))) {
    fail(where, `must be ${integer ? 'a whole number' : 'a number'} from ${min} to ${max}`);
  }
  return v;
}

function steps(v: unknown, where: string, catalogue: StepCatalogue | undefined): Partial<Record<StepKind, StepChoice>> {
  if (v === undefined) return {};
  if (!v || typeof v !== 'object' || Array.isArray(v)) fail(where, 'must be an object like {"image": {"provider": "simulator", "model": "sim-image-1"}}');
  const out: Partial<Record<StepKind, StepChoice>> = {};
  for (const [kind, choice] of Object.entries(v as Record<string, unknown>)) {
    if (!STEP_KINDS.includes(kind as StepKind)) fail(`${where}.${kind}`, `is not a step; the steps are ${STEP_KINDS.join(', ')}`);
    const c = choice as Record<string, unknown>;
    if (!c || typeof c !== 'object' || Array.isArray(c)) fail(`${where}.${kind}`, 'must be {"provider": ..., "model": ...}');
    onlyKnown(c, ['provider', 'model', 'options'], `${where}.${kind}`);
    const options = c.options;
    if (options !== undefined && (!options || typeof options !== 'object' || Array.isArray(options))) fail(`${where}.${kind}.options`, 'must be an object');
    const provider = text(c.provider, `${where}.${kind}.provider`, true)!;
    if (catalogue && !catalogue.isProvider(provider)) {
      const ids = catalogue.providers;
      fail(`${where}.${kind}.provider`, `"${provider}" is no provider; did you mean "${closest(provider, ids)}"? The providers are ${ids.join(', ')}`);
    }
    const model = text(c.model, `${where}.${kind}.model`, true)!;
    const problem = catalogue?.modelProblem(provider, kind as StepKind, model) ?? null;
    if (problem !== null) fail(`${where}.${kind}.model`, problem);
    out[kind as StepKind] = {
      provider,
      model,
      ...(options ? { options: options as Record<string, unknown> } : {}),
    };
  }
  return out;
}

function sceneFit(v: unknown, where: string): SceneFit {
  if (v === undefined) return 'narration';
  if (!SCENE_FITS.includes(v as SceneFit)) {
    fail(where, `must be "narration" (the scene lasts as long as its narration) or "scene" (it keeps its duration and a longer narration is cut)`);
  }
  return v as SceneFit;
}

function ownMedia(v: unknown, where: string, kind: 'image' | 'clip'): OwnMedia | undefined {
  if (v === undefined) return undefined;
  const [path, noun] = kind === 'image' ? ['/full/path/to/still.png', 'picture'] : ['/full/path/to/shot.mp4', 'clip'];
  const example = `must be {"file": "${path}"}, {"task": 12} (a finished ${kind} task) or {"take": 2} (what take 2 of this scene made; add "scene" for another scene's)`;
  if (!v || typeof v !== 'object' || Array.isArray(v)) fail(where, example);
  const o = v as Record<string, unknown>;
  if ('task' in o) {
    onlyKnown(o, ['task'], where);
    return { task: num(o.task, `${where}.task`, 1, Number.MAX_SAFE_INTEGER, 0, true) };
  }
  if ('take' in o) {
    onlyKnown(o, ['take', 'scene'], where);
    const scene = text(o.scene, `${where}.scene`, false);
    return { take: num(o.take, `${where}.take`, 1, Number.MAX_SAFE_INTEGER, 0, true), ...(scene === null ? {} : { scene }) };
  }
  if (!('file' in o)) fail(where, example);
  onlyKnown(o, ['file', 'sha256', 'name'], where);
  const file = text(o.file, `${where}.file`, true)!;
  if (!isAbsoluteAnywhere(file)) fail(`${where}.file`, `"${file}" is not a full path; give the ${noun}'s full path, like ${path}`);
  if (o.sha256 !== undefined && (typeof o.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(o.sha256))) fail(`${where}.sha256`, 'is the file\'s SHA-256 in 64 hex digits; leave it out and the studio fills it in');
  // The name a picture sent from the app had, shown in place of its copy's.
  const name = text(o.name, `${where}.name`, false);
  return { file, ...(typeof o.sha256 === 'string' ? { sha256: o.sha256 } : {}), ...(name === null ? {} : { name }) };
}

/** A seed that stays the same for a scene until its id changes. */
function seedOf(id: string): number {
  return createHash('sha256').update(id).digest().readUInt32BE(0) % 1_000_000;
}

/** Reads a storyboard as a person wrote it, naming the scene and field of anything wrong; steps checked against the catalogue. */
export function readStoryboard(value: unknown, catalogue?: StepCatalogue): Storyboard {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new StoryboardError('a storyboard must be a JSON object with "scenes"');
  const v = value as Record<string, unknown>;
  onlyKnown(v, ['width', 'height', 'aspect', 'resolution', 'fit', 'fps', 'steps', 'scenes', ...FINISHING_FIELDS], 'the storyboard');
  if (!Array.isArray(v.scenes) || v.scenes.length === 0) throw new StoryboardError('"scenes" must be a list with at least one scene');
  if (v.scenes.length > MAX_SCENES) throw new StoryboardError(`a storyboard has at most ${MAX_SCENES} scenes; this one has ${v.scenes.length}`);
  const ids = new Set<string>();
  const scenes = v.scenes.map((raw, i): Scene => {
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) fail(`scene ${i + 1}`, 'must be an object like {"imagePrompt": "a fox"}');
    const s = raw as Record<string, unknown>;
    const id = text(s.id, `scene ${i + 1} id`, false) ?? `scene-${i + 1}`;
    const where = `scene ${i + 1} ("${id}")`;
    onlyKnown(s, SCENE_FIELDS, where);
    if (ids.has(id)) fail(where, 'has the same id as an earlier scene; ids must differ');
    if (s.image !== undefined && s.clip !== undefined) fail(where, 'has both its own image and its own clip; a scene with its own clip needs no image, so remove "image"');
    if (s.motion !== undefined && s.clip !== undefined) fail(`${where} motion`, 'is how a still moves, and this scene has its own clip; remove "motion" or "clip"');
    if (s.motion !== undefined && s.trim !== undefined) fail(`${where} trim`, 'cuts a clip, and this scene shows its still ("motion"); remove "trim" or "motion"');
    ids.add(id);
    return {
      id,
      imagePrompt: text(s.imagePrompt, `${where} imagePrompt`, true)!,
      motionPrompt: text(s.motionPrompt, `${where} motionPrompt`, false) ?? text(s.imagePrompt, '', true)!,
      narration: text(s.narration, `${where} narration`, false),
      duration: num(s.duration, `${where} duration`, 0.5, 60, 3),
      seed: num(s.seed, `${where} seed`, 0, 2_147_483_647, seedOf(id), true),
      take: num(s.take, `${where} take`, 1, 10_000, 1, true),
      // A take's own seeds, as they were sent: the studio keeps every seed it sends within the scene seed's range.
      ...(s.imageSeed === undefined ? {} : { imageSeed: num(s.imageSeed, `${where} imageSeed`, 0, 2_147_483_647, 0, true) }),
      ...(s.clipSeed === undefined ? {} : { clipSeed: num(s.clipSeed, `${where} clipSeed`, 0, 2_147_483_647, 0, true) }),
      steps: steps(s.steps, `${where} steps`, catalogue),
      fit: sceneFit(s.fit, `${where} fit`),
      ...(s.image === undefined ? {} : { image: ownMedia(s.image, `${where} image`, 'image') }),
      ...(s.clip === undefined ? {} : { clip: ownMedia(s.clip, `${where} clip`, 'clip') }),
      ...(s.transition === undefined ? {} : { transition: readTransition(s.transition, `${where} transition`, fail) }),
      ...(s.motion === undefined ? {} : { motion: readMotion(s.motion, `${where} motion`, fail) }),
      ...(s.trim === undefined ? {} : { trim: readTrim(s.trim, `${where} trim`, fail) }),
    };
  });
  return {
    ...readFrameShape(v, fail),
    fps: num(v.fps, 'fps', 1, 60, 24, true),
    steps: steps(v.steps, 'steps', catalogue),
    scenes,
    ...readFinishing(v, fail),
  };
}

export function sceneById(board: Storyboard, id: string): Scene {
  const scene = board.scenes.find((s) => s.id === id);
  if (!scene) throw new StoryboardError(`there is no scene "${id}"; the scenes are ${board.scenes.map((s) => s.id).join(', ')}`);
  return scene;
}
