import { sceneById, StoryboardError, type Scene, type Storyboard } from '../domain/storyboard.ts';
import type { TakeRecord } from '../domain/takeRecord.ts';

/** Which steps of a scene a new take makes again: its clip only (the still is kept), its still (and so its clip), or both. */
export type TakeStep = 'clip' | 'image' | 'both';
const TAKE_STEPS: readonly TakeStep[] = ['both', 'clip', 'image'];

/** What a new take varies, and the seed it is made with when the person gives one. */
export interface TakeChoice {
  only?: TakeStep;
  seed?: number;
  /** How many new takes of each scene (1 to 8), each with seeds of its own (see variations.ts). */
  variations?: number;
}

/** A new take asked for in words the studio cannot follow. A storyboard error, so every host says it as bad input. */
class NewTakeRefused extends StoryboardError {}

/** The most new takes of a scene one Generate makes: a handful to compare, and a bound on what one Generate buys. */
export const MAX_VARIATIONS = 8;

/**
 * The largest seed a scene may carry, and the largest the studio sends: a seed it counts on (variations, a take
 * number) wraps around to 0 past it, so no seed a provider may refuse is sent. fal documents FLUX.1 [dev]'s `seed`
 * as an integer with no stated maximum (fal.ai/docs/model-api-reference/image-generation-api/flux-dev; fal-js
 * libs/client/src/types/endpoints.ts FluxDevInput `seed?: number`) while others of its models stop at 4294967295;
 * Replicate's FLUX schema has `seed` as an integer (replicate.com/black-forest-labs/flux-schnell/api); OpenAI's
 * image API takes none. 0 to 2^31 - 1 is inside all of them, and what a storyboard reads.
 */
export const MAX_SEED = 2_147_483_647;

/** A seed counted on past MAX_SEED, wrapped back into 0..MAX_SEED. */
export const inSeedRange = (seed: number) => seed % (MAX_SEED + 1);

/** Checks a choice as it comes from a person (command line, app or API), saying what to fix. */
export function readTakeChoice(only: unknown, seed: unknown, variations?: unknown): Required<Pick<TakeChoice, 'only'>> & TakeChoice {
  if (only !== undefined && !TAKE_STEPS.includes(only as TakeStep)) {
    throw new NewTakeRefused(`a new take is of "clip" (the same still, a new clip), "image" (a new still and so a new clip) or "both", not "${String(only)}"`);
  }
  if (seed !== undefined && (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0 || seed > MAX_SEED)) {
    throw new NewTakeRefused(`a seed is a whole number from 0 to ${MAX_SEED}, not ${JSON.stringify(seed)}`);
  }
  if (variations !== undefined && (typeof variations !== 'number' || !Number.isInteger(variations) || variations < 1 || variations > MAX_VARIATIONS)) {
    throw new NewTakeRefused(`variations are a whole number from 1 to ${MAX_VARIATIONS} (new takes of the scene in one Generate), not ${JSON.stringify(variations)}`);
  }
  return { only: (only as TakeStep | undefined) ?? 'both', ...(seed === undefined ? {} : { seed: seed as number }), ...(variations === undefined ? {} : { variations: variations as number }) };
}

// A take number varies the seed, so a new take's input (and so its identity) differs from every earlier take's.
const sceneSeed = (scene: Pick<Scene, 'seed' | 'take'>) => scene.seed + (scene.take - 1) * 7_919;

/**
 * The seed a scene's image or clip is made with: its own when a take set one, else the scene's. A storyboard saved
 * before a step could have its own seed has neither, so it plans exactly the inputs it did then.
 */
export function stepSeed(scene: Scene, step: 'image' | 'clip'): number {
  return (step === 'image' ? scene.imageSeed : scene.clipSeed) ?? sceneSeed(scene);
}

/** Leaves out a step's own seed when it is the one the scene's take number gives: the storyboard stays as it was written. */
function tidy(scene: Scene): Scene {
  const { imageSeed, clipSeed, ...rest } = scene;
  const plain = sceneSeed(scene);
  return { ...rest, ...(imageSeed === undefined || imageSeed === plain ? {} : { imageSeed }), ...(clipSeed === undefined || clipSeed === plain ? {} : { clipSeed }) };
}

/**
 * The scene as a new take numbered `next` makes it. The step kept holds the seed it had, so nothing of it is bought
 * again; the steps made again take the new take's seed, or the person's.
 */
export function newTake(scene: Scene, next: number, choice: TakeChoice): Scene {
  const only = choice.only ?? 'both';
  const keep = (step: 'image' | 'clip') => ({ [`${step}Seed`]: stepSeed(scene, step) });
  // The take number's seed, unless it goes past MAX_SEED: then its wrapped value, written down (tidy keeps it).
  const plain = sceneSeed({ ...scene, take: next });
  const set = (step: 'image' | 'clip') => ({ [`${step}Seed`]: choice.seed ?? inSeedRange(plain) });
  const { imageSeed: _i, clipSeed: _c, ...rest } = scene;
  return tidy({
    ...rest,
    take: next,
    ...(only === 'clip' ? keep('image') : set('image')),
    // A new still makes a new clip all the same (it is made from the still), so "image" keeps the clip's seed.
    ...(only === 'image' ? keep('clip') : set('clip')),
  });
}

/** Each named scene as its new take makes it, numbered past every take the scene has had, so nothing of them is reused. */
export function withNewTakes(board: Storyboard, scenes: readonly string[], takes: readonly TakeRecord[], choice: TakeChoice = {}): Storyboard {
  if (scenes.length === 0) {
    if (choice.only !== undefined && choice.only !== 'both') throw new NewTakeRefused(`"${choice.only}" says what a new take makes again: name the scene with a new take`);
    if ((choice.variations ?? 1) > 1) throw new NewTakeRefused('variations are new takes: name the scene with a new take');
    if (choice.seed !== undefined) throw new NewTakeRefused('a seed is for a new take: name the scene with a new take, or set the scene\'s seed in the storyboard');
    return board;
  }
  for (const id of scenes) {
    const scene = sceneById(board, id);
    if (scene.image && choice.only === 'image') throw new NewTakeRefused(`scene "${id}" uses your own still, so a new take of its image would make nothing new; make a new take of its clip (only "clip"), or take the still out of the scene`);
    // A clip made from the creator's own still is no take (a take records a bought still), so variations of it could be
    // neither compared nor picked, and the next Generate would count its seeds again: they are refused before anything is bought.
    if (scene.image && (choice.variations ?? 1) > 1) throw new NewTakeRefused(`scene "${id}" uses your own still, so variations of its clip could not be compared or picked; make one new take of its clip at a time, or take the still out of the scene to make variations of a bought still`);
  }
  const next = (scene: Scene) => Math.max(scene.take, ...takes.filter((t) => t.scene === scene.id).map((t) => t.variant)) + 1;
  return { ...board, scenes: board.scenes.map((s) => (scenes.includes(s.id) ? newTake(s, next(s), choice) : s)) };
}

/** The scene as picking a take leaves it: that take's number and the seeds its image and clip were made with. */
export function pickedScene(scene: Scene, variant: number, seeds: { image: number | null; clip: number | null }): Scene {
  const { imageSeed: _i, clipSeed: _c, ...rest } = scene;
  return tidy({ ...rest, take: variant, ...(seeds.image === null ? {} : { imageSeed: seeds.image }), ...(seeds.clip === null ? {} : { clipSeed: seeds.clip }) });
}
