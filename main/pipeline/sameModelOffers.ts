/**
 * The same model at another provider: for a new step whose model another provider also offers (resources/prices.json
 * "sameModels"), and for which the person has a key there too, the step as that provider would be sent it, priced.
 */
import type { StepChoice, StepKind, Storyboard } from '../domain/storyboard.ts';
import { estimateCost } from '../engine/estimator.ts';
import { sameModelElsewhere, type SameModelEntry } from '../pricing/sameModels.ts';
import { InvalidInput, MissingKey } from '../providers/invalidInput.ts';
import { titleOf } from '../providers/registry.ts';
import { madeBy, mapOptions, type Made } from '../providers/sameModelInputs.ts';
import type { ProviderOffer, StepEstimate } from './estimate.ts';
import type { PipelineDeps } from './generateOptions.ts';
import { planScenes, stepRefsAs, type PlannedStep } from './planner.ts';
import { stepChoice } from './stepChoice.ts';

/** The board with one scene's step of a kind made by `choice`. */
export function withChoice(board: Storyboard, scene: string, kind: StepKind, choice: StepChoice): Storyboard {
  return { ...board, scenes: board.scenes.map((s) => (s.id === scene ? { ...s, steps: { ...s.steps, [kind]: choice } } : s)) };
}

const sizeWords = (m: Made) => `${m.images > 1 ? `${m.images} images of ` : ''}${m.width}x${m.height}`;

/** Why the other request would not make what this one does, or null when it makes the same. */
function unlike(from: string, to: string, mine: Made | null, theirs: Made | null): string | null {
  if (!mine || !theirs) return `what ${titleOf(to)} would make for this step is not known here`;
  if (mine.width !== theirs.width || mine.height !== theirs.height || mine.images !== theirs.images) {
    return `${titleOf(to)} would make ${sizeWords(theirs)} for this frame, not the ${sizeWords(mine)} ${titleOf(from)} makes`;
  }
  return mine.format === theirs.format ? null : `${titleOf(to)} would make ${theirs.format} files, not the ${mine.format} ${titleOf(from)} makes`;
}

async function offer(deps: PipelineDeps, board: Storyboard, step: PlannedStep, family: string, other: SameModelEntry): Promise<ProviderOffer | null> {
  const adapter = deps.provider(other.provider);
  const scene = board.scenes.find((s) => s.id === step.scene);
  if (!adapter || !scene) return null;
  const kind = step.kind as StepKind;
  const base = { provider: other.provider, model: other.model, family, sameSource: `${other.source} (read ${other.date})`, scenes: [scene.id], saving: null };
  const mapped = mapOptions(step.provider, other, stepChoice(board, deps.defaults, scene, kind).options);
  const choice: StepChoice = { provider: other.provider, model: other.model, ...('options' in mapped && Object.keys(mapped.options).length > 0 ? { options: mapped.options } : {}) };
  if ('why' in mapped) return { ...base, cost: null, currency: 'USD', source: 'not priced', choice, notOffered: `this step cannot be written the same for ${titleOf(other.provider)}: ${mapped.why}` };
  // The step as the planner would make it once moved: the frame's size in that provider's own field, the same prompt and seed.
  const skip = new Set(board.scenes.filter((s) => s.id !== scene.id).map((s) => s.id));
  const moved = planScenes(withChoice(board, scene.id, kind, choice), deps.defaults, skip).find((s) => s.key === step.key);
  if (!moved) return null;
  let request;
  try {
    request = adapter.prepare({ kind: moved.kind, model: moved.model, input: stepRefsAs(moved.input, 'data:image/png;base64,') });
  } catch (err) {
    // No key there: the person is not offered a provider they cannot use.
    if (err instanceof MissingKey) return null;
    if (err instanceof InvalidInput) return { ...base, cost: null, currency: 'USD', source: 'not priced', choice, notOffered: `${titleOf(other.provider)} would refuse this step: ${err.message}` };
    throw err;
  }
  const price = await estimateCost(adapter, request, deps.prices?.(), true, (p, m) => deps.studio.tasks.recentBilledSeconds(p, m));
  const notSame = unlike(step.provider, other.provider, madeBy(step.provider, step.input), madeBy(other.provider, moved.input));
  return {
    ...base,
    cost: price?.cost ?? null,
    currency: price?.currency ?? 'USD',
    source: price?.source ?? `price unknown: no documented price for ${other.provider} ${other.model}`,
    choice,
    notOffered: notSame,
  };
}

/** The row with the same model's price at each other provider the person has a key for, when there is one. */
export async function withOffers(deps: PipelineDeps, board: Storyboard, step: PlannedStep, row: StepEstimate): Promise<StepEstimate> {
  if (deps.offers === false || (row.action !== 'new' && row.action !== 'rebuy') || row.keyMissing !== null || step.scene === null || step.kind === 'render' || step.kind === 'draft') return row;
  const same = sameModelElsewhere(step.provider, step.model);
  if (!same) return row;
  const offers = (await Promise.all(same.others.map((other) => offer(deps, board, step, same.family.family, other)))).filter((o) => o !== null);
  return offers.length > 0 ? { ...row, offers } : row;
}

/** The offer a row's step saves most by moving to, worked out from the whole plan (moveSavings.ts); null when none saves. */
export function cheaperOffer(row: StepEstimate): ProviderOffer | null {
  const saving = (row.offers ?? []).filter((o) => o.notOffered === null && o.saving !== null && o.saving > 0);
  return saving.reduce<ProviderOffer | null>((best, o) => (best === null || o.saving! > best.saving! ? o : best), null);
}
