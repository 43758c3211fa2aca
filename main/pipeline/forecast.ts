/** A forecast that learns: what a model's past bills say a new estimate of it will come to. Pure. */
import type { BilledRatio } from '../store/port.ts';

/** Fewer billed runs than this say too little about a model to forecast from. */
export const FORECAST_MIN_RUNS = 5;

export interface Forecast {
  /** The estimate scaled by the model's billed-to-estimated ratio, in micro-units of the step's currency. */
  cost: number;
  /** How many billed runs the ratio comes from. */
  runs: number;
  /** How far bills run from estimates, in whole percent (positive: over). */
  percent: number;
  /** "usually bills 20 % over (5 billed runs)". */
  words: string;
}

/**
 * The forecast of a step's estimate from its model's billed runs (this machine's, or the team's on a team database),
 * or null with fewer than FORECAST_MIN_RUNS of them in the step's currency. Billed and estimated are summed over the
 * runs, so a large run weighs as much as its money; the product is worked in whole micro-units without rounding twice.
 */
export function forecastOf(cost: number, currency: string, provider: string, model: string, ratios: readonly BilledRatio[]): Forecast | null {
  const r = ratios.find((x) => x.provider === provider && x.model === model && x.currency === currency);
  if (!r || r.runs < FORECAST_MIN_RUNS || r.estimated <= 0) return null;
  const scaled = (BigInt(cost) * BigInt(r.billed) * 2n + BigInt(r.estimated)) / (2n * BigInt(r.estimated));
  const percent = Math.round((r.billed / r.estimated - 1) * 100);
  const how = percent === 0 ? 'usually bills as estimated' : `usually bills ${Math.abs(percent)} % ${percent > 0 ? 'over' : 'under'}`;
  return { cost: Number(scaled), runs: r.runs, percent, words: `${how} (${r.runs} billed runs)` };
}

/**
 * What the budget holds a step at. With `useForecast` (settings "budgetUsesForecast"), a forecast above the estimate
 * raises it; one below never lowers it: the estimate is the documented price of this very request, and a model that
 * billed under it before (a promotion, a shorter run) is no promise it will again, so a budget is never loosened by history.
 */
export function budgetCost(step: { cost: number | null; forecast?: Forecast | null }, useForecast: boolean): number {
  const cost = step.cost ?? 0;
  return useForecast && step.forecast && step.forecast.cost > cost ? step.forecast.cost : cost;
}
