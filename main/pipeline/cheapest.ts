/**
 * Moves a scene, or every scene, to the provider that makes the same model for less (sameModelOffers.ts). It only
 * edits the storyboard: nothing is bought, and a storyboard saved by someone else meanwhile is refused, not overwritten.
 */
import type { StepKind, Storyboard } from '../domain/storyboard.ts';
import { sceneById } from '../domain/storyboard.ts';
import { StaleStoryboard } from '../domain/storyboardRevision.ts';
import { Pipeline } from './generate.ts';
import type { PipelineDeps } from './generateOptions.ts';
import { GenerateRefused } from './refusals.ts';
import { movedBoard, notLower } from './moveSavings.ts';
import { cheaperOffer } from './sameModelOffers.ts';

export interface CheapestMove {
  scene: string;
  kind: StepKind;
  from: { provider: string; model: string };
  to: { provider: string; model: string };
  /** The step's price before and after, in micro-units of `currency`; 0 for a scene sharing another's purchase. */
  before: number;
  after: number;
  currency: string;
  /** The scene whose step this one is one purchase with (sameSteps.ts): moved with it, so it is still bought once. */
  sharedWith?: string;
}

export interface Cheapest {
  /** The storyboard's revision after the move (unchanged when nothing was cheaper). */
  revision: number;
  moves: CheapestMove[];
  /** The new steps' total before and after the moves, each from the whole plan, in micro-units of `currency`. */
  total: { before: number; after: number; currency: string };
}

/**
 * `from`: the revision the person saw the estimate of; a storyboard saved since is refused (StaleStoryboard). Null
 * takes the stored revision, as a one-off command does; the save still refuses one saved between its read and its write.
 * A step other scenes share moves with all of them; a move the whole plan says would not lower the total is refused.
 */
export async function moveToCheapest(deps: PipelineDeps, projectName: string, scene: string | null, from: number | null): Promise<Cheapest> {
  const { studio } = deps;
  const project = await studio.projects.byName(projectName);
  if (!project) throw new GenerateRefused(`there is no project "${projectName}"`);
  const current = await studio.storyboards.revision(project.id);
  if (from !== null && from !== current) throw new StaleStoryboard(projectName, from, current);
  const revision = from ?? current;
  let board: Storyboard | undefined = await studio.storyboards.get(project.id);
  if (!board) throw new GenerateRefused(`project "${projectName}" has no storyboard yet; create one with "studio storyboard create"`);
  if (scene !== null) sceneById(board, scene);
  const pipeline = new Pipeline(deps);
  const estimate = await pipeline.estimate(projectName);
  const moves: CheapestMove[] = [];
  const notSaving: string[] = [];
  for (const row of estimate.steps) {
    if (row.scene === null || !row.offers || (scene !== null && !row.offers[0]!.scenes.includes(scene))) continue;
    const offer = cheaperOffer(row);
    if (!offer) {
      notSaving.push(...row.offers.filter((o) => o.saving !== null && o.notOffered !== null).map((o) => o.notOffered!));
      continue;
    }
    const kind = row.kind as StepKind;
    board = movedBoard(board, offer.scenes, kind, offer);
    for (const s of offer.scenes) {
      const own = s === row.scene;
      moves.push({ scene: s, kind, from: { provider: row.provider, model: row.model }, to: { provider: offer.provider, model: offer.model }, before: own ? row.cost! : 0, after: own ? offer.cost! : 0, currency: row.currency, ...(own ? {} : { sharedWith: row.scene }) });
    }
  }
  const total = (after: number) => ({ before: estimate.total, after, currency: estimate.project.currency });
  if (moves.length === 0) {
    if (notSaving.length > 0) throw new GenerateRefused(`${notSaving.join('; ')}. The storyboard is unchanged.`);
    return { revision, moves, total: total(estimate.total) };
  }
  // The moves together, weighed once more as one plan: each was weighed alone.
  const after = await pipeline.priced(project, board);
  const why = notLower(estimate, after, [...new Set(moves.map((m) => m.scene))], [...new Set(moves.map((m) => m.to.provider))].join(' and '));
  if (why) throw new GenerateRefused(`${why}. The storyboard is unchanged.`);
  return { revision: await studio.storyboards.save(project.id, board, studio.clock.now(), revision), moves, total: total(after.total) };
}

/** "scene-1 image: fal fal-ai/flux/dev to replicate black-forest-labs/flux-dev", and for a shared step "(one purchase with scene-1)". */
export function moveWords(m: CheapestMove): string {
  return `${m.scene} ${m.kind}: ${m.from.provider} ${m.from.model} to ${m.to.provider} ${m.to.model}${m.sharedWith ? ` (one purchase with ${m.sharedWith} ${m.kind})` : ''}`;
}
