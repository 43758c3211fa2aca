import type { Stores } from '../store/port.ts';
import type { Scene, Storyboard } from '../domain/storyboard.ts';
import { renameStepRefs, type PlannedStep } from './planner.ts';
import { inSeedRange, newTake, stepSeed, type TakeChoice } from './newTakes.ts';
import { recordTakes } from './takes.ts';

/**
 * Variations: N new takes of a scene in one Generate, priced in one estimate and checked against the budget once.
 * Each is its own task, one per paid request, with a seed of its own. A model that makes several images in one
 * request bills each image all the same, so N requests cost what one request for N would: fal bills "based on the
 * output you generate", "per image or per megapixel" (https://docs.fal.ai/documentation/model-apis/pricing), and
 * OpenAI prices its image models per image (https://developers.openai.com/api/docs/models/gpt-image-1).
 */

/** The step key of variation `n` (2 and up; the first is the scene's own take): never a key of a scene's own steps. */
const keyOf = (key: string, n: number) => `${key}:variation-${n}`;

/** Variations 2..N of each scene with a new take: each numbered past the one before, so each has seeds of its own. */
export function variationScenes(board: Storyboard, scenes: readonly string[], choice: TakeChoice): { n: number; scene: Scene }[] {
  const count = choice.variations ?? 1;
  const out: { n: number; scene: Scene }[] = [];
  for (const first of board.scenes.filter((s) => scenes.includes(s.id))) {
    for (let n = 2; n <= count; n++) {
      // A seed the person gave is the first variation's; the others count on from it.
      const seed = choice.seed === undefined ? {} : { seed: inSeedRange(choice.seed + n - 1) };
      out.push({ n, scene: newTake(first, first.take + n - 1, { only: choice.only, ...seed }) });
    }
  }
  return out;
}

const sameStep = (s: PlannedStep) => JSON.stringify([s.provider, s.model, s.input]);

/**
 * The steps of variations 2..N, after `planned` (the storyboard's own). A step the same as one already planned (the
 * narration; the still of a take of the clip only) is not planned twice: its variation uses that one.
 */
export function variationSteps(variations: readonly { n: number; scene: Scene }[], planned: readonly PlannedStep[], plan: (scene: Scene) => PlannedStep[]): PlannedStep[] {
  const seen = new Map(planned.map((s) => [sameStep(s), s.key]));
  const out: PlannedStep[] = [];
  for (const { n, scene } of variations) {
    const keys = new Map<string, string>();
    for (const step of plan(scene)) {
      const mine = { ...step, key: keyOf(step.key, n), input: renameStepRefs(step.input, keys) as Record<string, unknown>, dependsOn: step.dependsOn.map((k) => keys.get(k) ?? k) };
      const earlier = seen.get(sameStep(mine));
      if (earlier !== undefined) {
        keys.set(step.key, earlier);
        continue;
      }
      keys.set(step.key, mine.key);
      seen.set(sameStep(mine), mine.key);
      out.push(mine);
    }
  }
  return out;
}

/**
 * Records each variation as a take of its scene, after the storyboard's own takes, which stay picked: the render uses
 * them. A variation's step that was not planned on its own is the one of the storyboard's take it shares.
 */
export async function recordVariations(
  stores: Pick<Stores, 'takes'>,
  projectId: number,
  board: Storyboard,
  variations: readonly { n: number; scene: Scene }[],
  ids: ReadonlyMap<string, number>,
  now: number,
) {
  const picks = await stores.takes.picks(projectId);
  const added = [];
  for (const { n, scene } of variations) {
    const own = new Map<string, number>();
    for (const kind of ['image', 'clip', 'speech']) {
      const key = `${scene.id}:${kind}`;
      const id = ids.get(keyOf(key, n)) ?? ids.get(key);
      if (id !== undefined) own.set(key, id);
    }
    added.push(...(await recordTakes(stores, projectId, { ...board, scenes: [scene] }, new Map([[scene.id, stepSeed(scene, 'clip')]]), own, now)));
  }
  for (const scene of new Set(variations.map((v) => v.scene.id))) {
    const picked = picks.get(scene);
    if (picked !== undefined) await stores.takes.pick(projectId, scene, picked, now);
  }
  return added;
}
