import { toMicros } from '../domain/tasks/model.ts';
import { pricesFile } from './pricesFile.ts';

/** A provider's price for time a request runs (Replicate's hardware), from resources/prices.json `timeBilling`. */
export interface TimePrice {
  hardware: string;
  perSecond: number;
  currency: string;
  source: string;
  official: boolean;
  date: string;
}

/**
 * Whether the provider bills this model by the time it runs: at Replicate, a pinned version (`owner/name:<64 hex>`);
 * the official models themselves are billed per output (prices.json `timeBilling.replicate.about`).
 */
export function billedByTime(provider: string, model: string): boolean {
  return provider === 'replicate' && /:[0-9a-f]{64}$/.test(model);
}

export function timePriceOf(provider: string): TimePrice | null {
  return (pricesFile().timeBilling?.[provider] as TimePrice | undefined) ?? null;
}

const cite = (p: TimePrice) => `${p.source}${p.official ? '' : ' (a third-party figure)'}, read ${p.date}`;

/**
 * The longest run a reported time is believed for. "Predictions time out after running for 30 minutes. If you require
 * more than 30 minute timeouts for predictions, contact us" (replicate.com/docs/topics/predictions/lifecycle, Timeouts):
 * support can raise that limit by an amount no page states, so a whole day is allowed, 48 times the documented limit.
 */
export const LONGEST_RUN_SECONDS = 24 * 60 * 60;

/** The seconds of a reported run time, or why no bill can be worked out from it. */
export function runSeconds(reported: unknown): { seconds: number } | { why: string } {
  const no = (what: string) => ({ why: `no billed figure was recorded: Replicate reported ${what} as the run time (metrics.predict_time), which cannot be billed from; the estimate stands` });
  if (reported === undefined || reported === null) return no('nothing');
  if (typeof reported !== 'number') return no(`${JSON.stringify(String(reported).slice(0, 40))}, not a number,`);
  if (!Number.isFinite(reported)) return no(`${reported}, not a number of seconds,`);
  if (reported < 0) return no(`${reported} s, less than nothing,`);
  if (reported > LONGEST_RUN_SECONDS) return no(`${reported} s, longer than the day a prediction is believed to run (Replicate stops one after 30 minutes unless its support raised the limit),`);
  return { seconds: reported };
}

/** What `seconds` of run time cost, and how, in words. */
export function timeCost(seconds: number, price: TimePrice): { micros: number; how: string } {
  return { micros: toMicros(seconds * price.perSecond), how: `${seconds} s at ${price.perSecond} ${price.currency} a second on ${price.hardware}, ${cite(price)}` };
}

/** How many of the latest runs an estimate looks at, and the share of them it must cover. */
const PAST_RUNS = 50;
const PERCENTILE = 0.9;

/** The 90th percentile, nearest rank, of past run times: with three runs, the longest of them. */
export function typicalSeconds(past: readonly number[]): number | null {
  const runs = past.slice(0, PAST_RUNS).filter((s) => Number.isFinite(s) && s >= 0).sort((a, b) => a - b);
  if (runs.length === 0) return null;
  return runs[Math.ceil(PERCENTILE * runs.length) - 1]!;
}

/**
 * The estimate of a request billed by time, from the seconds the provider billed this model's earlier runs here;
 * null with no earlier run (see unknownUntilRun).
 */
export function timeEstimate(provider: string, past: readonly number[]): { cost: number; currency: string; source: string } | null {
  const price = timePriceOf(provider);
  const seconds = typicalSeconds(past);
  if (!price || seconds === null) return null;
  const { micros, how } = timeCost(seconds, price);
  const runs = Math.min(past.length, PAST_RUNS);
  return {
    cost: micros,
    currency: price.currency,
    source: `estimated from time: ${how}; ${seconds} s is the 90th percentile of the run time Replicate billed for this version's latest ${runs} run${runs === 1 ? '' : 's'} here`,
  };
}

/** Why a request billed by time has no price yet. */
export function unknownUntilRun(provider: string, model: string): string {
  const price = timePriceOf(provider);
  const rate = price ? ` (${price.perSecond} ${price.currency} a second on ${price.hardware})` : '';
  return `price unknown until it has run once: Replicate bills the pinned version ${model} by the seconds it runs${rate}, and it has not run here yet`;
}
