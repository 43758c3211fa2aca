/** The StudioApi's estimate and Generate: what the project's storyboard would buy, and buying it. */

import type { GenerateEstimate } from '../pipeline/estimate.ts';
import { readTakeChoice } from '../pipeline/newTakes.ts';
import { narrationWords } from '../pipeline/narrationLengths.ts';
import { refusals } from './apiErrors.ts';
import type { ServiceContext } from './serviceContext.ts';
import { money } from './taskView.ts';
import type { EstimateStep, EstimateView, GenerateOptions, NewTakeOptions } from './contract.ts';

function stepView(s: GenerateEstimate['steps'][number]): EstimateStep {
  const { offers, forecast, ...row } = s;
  return {
    ...row,
    cost: money(s.cost),
    lost: s.lost && { ...s.lost, cost: money(s.lost.cost)! },
    ...(forecast ? { forecast: { ...forecast, cost: money(forecast.cost)! } } : {}),
    ...(offers ? { offers: offers.map(({ choice: _, ...o }) => ({ ...o, cost: money(o.cost), saving: money(o.saving) })) } : {}),
  };
}

function estimateView(e: GenerateEstimate): EstimateView {
  return {
    project: e.project.name,
    currency: e.project.currency,
    steps: e.steps.map(stepView),
    total: money(e.total)!,
    simulatedTotal: money(e.simulatedTotal)!,
    otherCurrencies: e.otherCurrencies.map((c) => ({ currency: c.currency, total: money(c.total)! })),
    missingKeys: e.missingKeys,
    unpriced: e.unpriced.length,
    spentUnpriced: e.spentUnpriced,
    budgetByForecast: e.held.byForecast,
    budgetEarlierByForecast: e.held.earlier > 0,
    balances: e.balances,
    spent: money(e.spent)!,
    spentSimulated: money(e.spentSimulated)!,
    budget: money(e.budget),
    left: money(e.left),
    overBy: money(e.overBy)!,
    narration: e.narration.map((n) => ({ scene: n.scene, predictedSec: n.predictedSec, sceneSec: n.sceneSec, cutSec: n.cutSec, heldSec: n.heldSec, text: narrationWords(n) })),
    shape: e.shape,
    film: e.film && { seconds: e.film.seconds, scenesSec: e.film.scenesSec, overlapSec: e.film.overlapSec, text: `The film: ${e.film.words}` },
  };
}

export async function estimate(ctx: ServiceContext, project: string, newTakes: string[] = [], options: NewTakeOptions = {}): Promise<EstimateView> {
  return refusals(async () => estimateView(await ctx.pipeline.estimate(project, newTakes, readTakeChoice(options?.only, options?.seed, options?.variations))));
}

export async function generate(ctx: ServiceContext, project: string, newTakes: string[] = [], options: GenerateOptions = {}): Promise<EstimateView> {
  return refusals(async () => estimateView(await ctx.pipeline.generate(project, { newTakes, take: readTakeChoice(options?.only, options?.seed, options?.variations), rebuyLost: options?.rebuyLost === true, confirmUnpriced: options?.confirmUnpriced === true })));
}
