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
import { cheaperOffer, withChoice } from './sameModelOffers.ts';

export interface CheapestMove {
  scene: string;
  kind: StepKind;
  from: { provider: string; model: string };
  to: { provider: string; model: string };
  /** The step's price before and after, in micro-units of `currency`. */
  before: number;
  after: number;
  currency: string;
}

export interface Cheapest {
  /** The storyboard's revision after the move (unchanged when nothing was cheaper). */
  revision: number;
  moves: CheapestMove[];
}

/**
 * `from`: the revision the person saw the estimate of; a storyboard saved since is refused (StaleStoryboard). Null
 * takes the stored revision, as a one-off command does; the save still refuses one saved between its read and its write.
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
  const estimate = await new Pipeline(deps).estimate(projectName);
  const moves: CheapestMove[] = [];
  for (const row of estimate.steps) {
    if (row.scene === null || (scene !== null && row.scene !== scene)) continue;
    const offer = cheaperOffer(row);
    if (!offer) continue;
    board = withChoice(board, row.scene, row.kind as StepKind, offer.choice);
    moves.push({ scene: row.scene, kind: row.kind as StepKind, from: { provider: row.provider, model: row.model }, to: { provider: offer.provider, model: offer.model }, before: row.cost!, after: offer.cost!, currency: row.currency });
  }
  if (moves.length === 0) return { revision, moves };
  return { revision: await studio.storyboards.save(project.id, board, studio.clock.now(), revision), moves };
}

/** "scene-1 image: fal fal-ai/flux/dev to replicate black-forest-labs/flux-dev". */
export function moveWords(m: CheapestMove): string {
  return `${m.scene} ${m.kind}: ${m.from.provider} ${m.from.model} to ${m.to.provider} ${m.to.model}`;
}
