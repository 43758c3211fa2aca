/** The estimate walk: checks every new step's input, prices it (quote or catalogue) and sums it against the budget. */
import { estimateCost } from '../engine/estimator.ts';
import { billedByTime, unknownUntilRun } from '../pricing/timeBilling.ts';
import type { Project } from '../domain/project.ts';
import type { Storyboard } from '../domain/storyboard.ts';
import { budgetCheck, isSimulated } from '../domain/simulated.ts';
import { forecastOf, forecastRaises } from './forecast.ts';
import { withOffers } from './sameModelOffers.ts';
import type { PreparedRequest } from '../providers/port.ts';
import { InvalidInput, MissingKey } from '../providers/invalidInput.ts';
import { prepareWithoutKey } from '../providers/registry.ts';
import { clipRefusal } from '../providers/frameSizes.ts';
import type { Stores } from '../store/port.ts';
import { balances } from './balances.ts';
import { decide } from './decide.ts';
import type { GenerateEstimate, StepEstimate } from './estimate.ts';
import { reusedPrice, samePrice, stepEstimate, yoursEstimate, type Price } from './estimateRows.ts';
import type { GenerateOptions, PipelineDeps } from './generateOptions.ts';
import { distinctKeys, missingKeyNote, type MissingKeyNote } from './missingKeys.ts';
import { narrationNotes } from './narrationLengths.ts';
import { filmNote } from './filmNote.ts';
import { sceneClips } from './sceneClips.ts';
import type { OwnScenes } from './ownScenes.ts';
import { ownStillRefusal, ownStillShapeNotes } from './ownStillLimits.ts';
import { ownShapeCuts } from './ownShapeCuts.ts';
import { inputOrigin, RENDER_PROVIDER, stepRefsAs, type PlannedStep } from './planner.ts';
import { GenerateRefused } from './refusals.ts';
import { shapeNotes } from './shapeNotes.ts';

/** A new step's request as its adapter builds it; `keyMissing` when it was built without the provider's key. */
interface Checked {
  request: PreparedRequest | 'local';
  keyMissing: MissingKeyNote | null;
}

/** Prices every step that is not reused (a network call for some providers). */
export async function walk(deps: PipelineDeps, project: Project, board: Storyboard, options: GenerateOptions, own: OwnScenes): Promise<GenerateEstimate> {
  const steps: StepEstimate[] = [];
  const requests = new Map<string, PreparedRequest[]>();
  const decided = await decide(deps, project, board, options, deps.studio, own);
  // Every new step is checked before any provider is asked for a quote: a refused Generate sends nothing.
  const shapeRefused = clipRefusal(decided.map(({ step, verdict }) => ({ ...step, action: verdict.action })), board.width, board.height);
  if (shapeRefused) throw new GenerateRefused(shapeRefused);
  const clipSteps = decided.map(({ step, verdict }) => ({ ...step, action: verdict.action }));
  const stillRefused = ownStillRefusal(clipSteps, own.stills);
  if (stillRefused) throw new GenerateRefused(stillRefused);
  // Each model's past bills against its estimates, for the forecasts (forecast.ts): one query, before any step is priced.
  const ratios = await deps.studio.tasks.billedRatios();
  const checked = decided.map(({ step, verdict }) => (verdict.action === 'reuse' || step.sameAs !== undefined ? null : check(deps, step, board)));
  for (const [i, { step, verdict }] of decided.entries()) {
    const still = step.kind === 'clip' && step.scene !== null ? own.stills.get(step.scene) : undefined;
    if (still) steps.push(yoursEstimate(step.scene!, still, project.currency));
    if (step.kind === 'render') for (const [scene, clip] of own.clips) steps.push(yoursEstimate(scene, clip, project.currency, 'clip'));
    if (verdict.action === 'reuse') {
      steps.push(stepEstimate(step, verdict, reusedPrice(verdict.task, verdict.why, project.currency)));
      continue;
    }
    if (step.sameAs !== undefined) {
      steps.push(stepEstimate(step, verdict, samePrice(step.sameAs, project.currency)));
      continue;
    }
    const { request, keyMissing } = checked[i]!;
    const row = stepEstimate(step, verdict, await price(deps, step, request, keyMissing === null), keyMissing);
    const forecast = row.cost === null ? null : forecastOf(row.cost, row.currency, step.provider, step.model, ratios);
    steps.push(await withOffers(deps, board, step, forecast ? { ...row, forecast } : row));
    if (request !== 'local' && keyMissing === null) requests.set(step.provider, [...(requests.get(step.provider) ?? []), request]);
  }
  const narration = narrationNotes(board, deps.defaults, sceneClips(decided));
  const shape = [...shapeNotes(steps.filter((s) => s.action !== 'yours'), board), ...ownStillShapeNotes(clipSteps, own.stills, board), ...ownShapeCuts(board, own.stills, own.clips, decided.map((d) => d.step))];
  const film = filmNote(board, narration, own.music?.words ?? null);
  return { ...(await summed(project, steps, deps.studio, deps.studio.settings.budgetUsesForecast)), balances: await balances(deps, requests), narration, shape, film };
}

/** Sums the new steps and holds them, with what the project spent, against its budget. */
export async function summed(project: Project, steps: StepEstimate[], stores: Stores, useForecast = false): Promise<GenerateEstimate> {
  const paid = steps.filter((s) => s.action !== 'reuse' && s.action !== 'yours');
  // Two currencies are never added: a step priced in another one is summed apart, per currency.
  const elsewhere = (s: StepEstimate) => s.currency !== project.currency && s.cost !== null && s.cost > 0;
  const bought = paid.filter((s) => !elsewhere(s));
  const otherCurrencies = sumPerCurrency(paid.filter(elsewhere));
  const total = bought.reduce((sum, s) => sum + (s.cost ?? 0), 0);
  const simulatedTotal = bought.filter((s) => s.simulated).reduce((sum, s) => sum + (s.cost ?? 0), 0);
  const unpriced = bought.filter((s) => s.cost === null);
  const spend = (await stores.tasks.spend(project.id))[0]!;
  const spent = spend.actual + spend.estimated + spend.possiblyCharged + spend.queued;
  // Settings "budgetUsesForecast": new steps and earlier work with no bill yet are held at their model's forecast where that is above the estimate (forecast.ts).
  const raises = useForecast ? await raisesOf(project, bought, stores) : [];
  const raised = (simulated: boolean, part: 'earlier' | 'added') => raises.filter((r) => isSimulated(r.provider) === simulated).reduce((sum, r) => sum + r[part], 0);
  const heldSimulated = simulatedTotal + raised(true, 'added');
  const heldTotal = total + raised(false, 'added') + raised(true, 'added');
  const earlier = { real: raised(false, 'earlier'), simulated: raised(true, 'earlier') };
  const held = { total: heldTotal, simulated: heldSimulated, byForecast: heldTotal > total, earlier: earlier.real + earlier.simulated, earlierSimulated: earlier.simulated };
  const kinds = [{ spent: spent - spend.simulated + earlier.real, added: heldTotal - heldSimulated }, { spent: spend.simulated + earlier.simulated, added: heldSimulated }] as const;
  const { left, overBy } = project.budget === null ? { left: null, overBy: 0 } : budgetCheck(project.budget, ...kinds);
  const missingKeys = distinctKeys(bought.map((s) => s.keyMissing));
  return { project, steps, total, simulatedTotal, held, otherCurrencies, missingKeys, unpriced, spent, spentSimulated: spend.simulated, spentUnpriced: spend.unpriced, budget: project.budget, left, overBy, balances: [], takes: [], narration: [], shape: [], film: null };
}

/** The forecasts' raises of the project's earlier unbilled work and of the new steps, per model (forecast.ts). */
async function raisesOf(project: Project, bought: StepEstimate[], stores: Stores) {
  // Possibly charged counts a request at its bill where one was read, else its estimate: held at the forecast, never lower.
  const earlier = (await stores.tasks.spendByModel(project.id)).map((m) => ({ provider: m.provider, model: m.model, unbilled: m.estimatedOnly + m.possiblyCharged + m.queued }));
  return forecastRaises(project.currency, bought, earlier, await stores.tasks.billedRatios());
}

function sumPerCurrency(steps: StepEstimate[]): { currency: string; total: number }[] {
  const totals = new Map<string, number>();
  for (const s of steps) totals.set(s.currency, (totals.get(s.currency) ?? 0) + s.cost!);
  return [...totals].map(([currency, total]) => ({ currency, total }));
}

/**
 * Builds a step's request as its adapter will, which checks its input. An input the provider would refuse is
 * refused here, before anything is asked of the provider or saved, naming the field, its limit and where in
 * the storyboard (or settings) it was written. 'local' for a step made on this machine.
 */
function check(deps: PipelineDeps, step: PlannedStep, board: Storyboard): Checked {
  if (step.provider === RENDER_PROVIDER) return { request: 'local', keyMissing: null };
  const adapter = deps.provider(step.provider);
  if (!adapter) throw new GenerateRefused(`step ${step.key}: there is no provider "${step.provider}"`);
  // The step's inputs from other steps do not exist yet; a stand-in lets the rest be checked.
  const task = { kind: step.kind, model: step.model, input: stepRefsAs(step.input, 'data:image/png;base64,') };
  try {
    try {
      return { request: adapter.prepare(task), keyMissing: null };
    } catch (err) {
      // No key yet is no reason not to price it: the request is built (and its input checked) as it will be sent.
      if (!(err instanceof MissingKey)) throw err;
      return { request: prepareWithoutKey(step.provider, task), keyMissing: missingKeyNote(step.provider, err) };
    }
  } catch (err) {
    if (!(err instanceof InvalidInput)) throw err;
    const origin = err.field === undefined ? null : inputOrigin(board, deps.defaults, step, err.field);
    throw new GenerateRefused(`step ${step.key} (${step.provider} ${step.model}): ${err.message}${origin ? `; change ${origin}` : ''}. Nothing was enqueued.`);
  }
}

/** A checked step's price: the provider's quote (only with a key to ask with), else the catalogue. */
async function price(deps: PipelineDeps, step: PlannedStep, request: PreparedRequest | 'local', canQuote: boolean): Promise<Price> {
  if (request === 'local') return { cost: 0, currency: 'USD', source: 'made on this machine: no charge' };
  const estimate = await estimateCost(deps.provider(step.provider)!, request, deps.prices?.(), canQuote, (p, m) => deps.studio.tasks.recentBilledSeconds(p, m));
  const why = billedByTime(step.provider, step.model) ? unknownUntilRun(step.provider, step.model) : `price unknown: no documented price for ${step.provider} ${step.model}`;
  return estimate ?? { cost: null, currency: 'USD', source: `${why}; set one in settings ("prices")` };
}
