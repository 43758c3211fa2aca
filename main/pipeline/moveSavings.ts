/**
 * What moving a step to the same model at another provider saves, worked out from the whole plan after the move: a
 * step other scenes share (sameSteps.ts: one purchase used by several scenes) moves with every scene that shares it,
 * and the storyboard so changed is priced as a Generate would price it. Comparing one step's two prices is not
 * enough: moving one scene of a shared purchase alone would buy the picture twice.
 */
import { moneyWords } from '../domain/money.ts';
import type { StepKind, Storyboard } from '../domain/storyboard.ts';
import type { GenerateEstimate, ProviderOffer, StepEstimate } from './estimate.ts';
import { GenerateRefused } from './refusals.ts';
import { withChoice } from './sameModelOffers.ts';

/** Prices a storyboard as the estimate would, without offers. */
export type PriceBoard = (board: Storyboard) => Promise<GenerateEstimate>;

/** The scenes a row's step is one purchase for: its own, then each scene whose step is marked the same as it. */
export function sharingScenes(estimate: GenerateEstimate, row: StepEstimate): string[] {
  return [row.scene!, ...estimate.steps.filter((s) => s.sameAs === row.key && s.scene !== null).map((s) => s.scene!)];
}

/** The board with the step of `kind` of each of `scenes` made by the offer's choice. */
export function movedBoard(board: Storyboard, scenes: string[], kind: StepKind, offer: ProviderOffer): Storyboard {
  return scenes.reduce((b, scene) => withChoice(b, scene, kind, offer.choice), board);
}

/**
 * Why the plan `after` cannot be compared with `before` by its total, or null when it can: two totals compare only
 * when both leave out the same steps (of unknown price, or priced in another currency).
 */
export function incomparable(before: GenerateEstimate, after: GenerateEstimate): string | null {
  if (after.unpriced.length > before.unpriced.length) return `it would leave ${after.unpriced.length - before.unpriced.length} more step(s) of unknown price`;
  const others = (e: GenerateEstimate) => JSON.stringify(e.otherCurrencies);
  if (others(after) !== others(before)) return 'it would change what is priced in another currency, which is never added to the total';
  return null;
}

const listed = (scenes: string[]) => (scenes.length === 1 ? `scene ${scenes[0]}` : `scenes ${scenes.slice(0, -1).join(', ')} and ${scenes.at(-1)}`);

/** Why a move does not lower the total, in words, or null when it does. */
export function notLower(before: GenerateEstimate, after: GenerateEstimate, scenes: string[], provider: string): string | null {
  const why = incomparable(before, after);
  const c = before.project.currency;
  if (why) return `moving ${listed(scenes)} to ${provider} cannot be weighed: ${why}`;
  if (after.total < before.total) return null;
  return `moving ${listed(scenes)} to ${provider} would not lower the total: the new steps would come to about ${moneyWords(after.total, c)}, against ${moneyWords(before.total, c)} now`;
}

/**
 * The estimate with each offer's `saving` and `scenes` worked out from the whole plan after its move; an offer whose
 * move would not lower the total is not offered, saying why. `board` is the storyboard the estimate was made of.
 */
export async function withSavings(estimate: GenerateEstimate, board: Storyboard, priceBoard: PriceBoard): Promise<GenerateEstimate> {
  const steps: StepEstimate[] = [];
  for (const row of estimate.steps) {
    if (!row.offers || row.scene === null) {
      steps.push(row);
      continue;
    }
    const scenes = sharingScenes(estimate, row);
    const offers: ProviderOffer[] = [];
    for (const o of row.offers) offers.push({ ...o, scenes, ...(await weighed(estimate, board, priceBoard, row, scenes, o)) });
    steps.push({ ...row, offers });
  }
  return { ...estimate, steps };
}

async function weighed(estimate: GenerateEstimate, board: Storyboard, priceBoard: PriceBoard, row: StepEstimate, scenes: string[], o: ProviderOffer): Promise<Pick<ProviderOffer, 'saving' | 'notOffered'>> {
  // Only a move that could save is priced as a whole plan: one whose price is known, in the project's currency.
  if (o.notOffered !== null || o.cost === null || row.cost === null || o.currency !== row.currency || row.currency !== estimate.project.currency) return { saving: null, notOffered: o.notOffered };
  let after: GenerateEstimate;
  try {
    after = await priceBoard(movedBoard(board, scenes, row.kind as StepKind, o));
  } catch (err) {
    if (!(err instanceof GenerateRefused)) throw err;
    return { saving: null, notOffered: `the storyboard moved there would be refused: ${err.message}` };
  }
  return { saving: estimate.total - after.total, notOffered: notLower(estimate, after, scenes, o.provider) };
}
