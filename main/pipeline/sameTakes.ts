/** A new take asked for whose every step an earlier take of its scene made already: it is that take, picked. */
import type { Storyboard } from '../domain/storyboard.ts';
import type { Stores } from '../store/port.ts';
import { pickedScene, stepSeed } from './newTakes.ts';
import { takeWith } from './takes.ts';

/** An earlier take a new take turned out to be, and the seeds both were made with. */
export interface SameTake {
  scene: string;
  take: number;
  seeds: { image: number; clip: number };
}

/**
 * For each scene named for a new take whose tasks (`ids`, by step key, after the enqueue) are an earlier take's,
 * that take, and the storyboard with the scene as picking it leaves it: its own take number, so the storyboard
 * says the take the render uses (a later take of its clip only starts from that take's still), not a number no
 * take has.
 */
export async function sameTakes(
  stores: Pick<Stores, 'takes'>,
  projectId: number,
  board: Storyboard,
  newTakes: readonly string[],
  ids: ReadonlyMap<string, number>,
): Promise<{ board: Storyboard; same: SameTake[] }> {
  if (newTakes.length === 0) return { board, same: [] };
  const takes = await stores.takes.list(projectId);
  const same: SameTake[] = [];
  const scenes = board.scenes.map((scene) => {
    const earlier = newTakes.includes(scene.id) ? takeWith(takes, scene.id, ids) : undefined;
    if (!earlier) return scene;
    // Its steps are the earlier take's, inputs and so seeds included.
    const seeds = { image: stepSeed(scene, 'image'), clip: stepSeed(scene, 'clip') };
    same.push({ scene: scene.id, take: earlier.take, seeds });
    return pickedScene(scene, earlier.variant, seeds);
  });
  return { board: same.length === 0 ? board : { ...board, scenes }, same };
}
