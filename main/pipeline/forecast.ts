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

/** One model's raise above the estimates, in micro-units: of the project's earlier unbilled work, and of this Generate's new steps. */
export interface ForecastRaise {
  provider: string;
  model: string;
  earlier: number;
  added: number;
}

/**
 * What settings "budgetUsesForecast" adds to the budget check above the estimates, per model with a forecast: the
 * project's earlier work with no bill yet (`earlier`: accepted with no actual, possibly charged, enqueued and not sent,
 * at its estimate) is held at the forecast as well as the new steps (`steps`, priced in `currency`), so the same steps
 * pass or fail the same way however many Generates they are split into. Each model's earlier and new work are forecast
 * together, so the sum never depends on where the split falls (rounding included). A forecast below the estimate never
 * lowers it: the estimate is the documented price of the very request, and a model that billed under it before (a
 * promotion, a shorter run) is no promise it will again, so a budget is never loosened by history.
 */
export function forecastRaises(
  currency: string,
  steps: readonly { provider: string; model: string; cost: number | null }[],
  earlier: readonly { provider: string; model: string; unbilled: number }[],
  ratios: readonly BilledRatio[],
): ForecastRaise[] {
  const models = new Map<string, { provider: string; model: string; earlier: number; added: number }>();
  const of = (provider: string, model: string) => {
    const key = JSON.stringify([provider, model]);
    if (!models.has(key)) models.set(key, { provider, model, earlier: 0, added: 0 });
    return models.get(key)!;
  };
  for (const e of earlier) of(e.provider, e.model).earlier += e.unbilled;
  for (const s of steps) of(s.provider, s.model).added += s.cost ?? 0;
  const raise = (cost: number, provider: string, model: string) => Math.max(0, (forecastOf(cost, currency, provider, model, ratios)?.cost ?? cost) - cost);
  return [...models.values()].map(({ provider, model, earlier, added }) => {
    const before = raise(earlier, provider, model);
    // The forecast of the sum is at least the forecast of its earlier part plus the new estimates when bills run over.
    return { provider, model, earlier: before, added: Math.max(0, raise(earlier + added, provider, model) - before) };
  });
}
