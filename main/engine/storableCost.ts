import { moneyWords } from '../domain/money.ts';
import type { ResultRecord } from '../domain/ports.ts';
import type { Money, ProviderResult, ReportedCost } from '../providers/port.ts';

/**
 * The most one request's billed figure may be, in micro-units: a million of its currency. No request to a generative
 * API costs near that, so a larger figure is a misreading of what the provider reported; and below it a total of
 * thousands of rows stays within the integers JavaScript counts exactly (2^53 - 1), as PostgreSQL's bigint does, so
 * neither the write nor any later read of the row can fail over it.
 */
export const MOST_BILLED_MICROS = 1_000_000 * 1_000_000;

/**
 * Why a billed figure cannot be stored as the task's, or null when it can. `currency` is the task's: a figure in
 * another is never stored as its actual, since no rate is known to convert it with and spend sums by currency.
 */
export function unstorable(cost: ReportedCost, currency: string): string | null {
  const { amount } = cost;
  const figure = Number.isFinite(amount) ? `${amount / 1_000_000} ${cost.currency}` : `${String(amount)} ${cost.currency}`;
  if (cost.currency !== currency) {
    return `no billed figure was recorded: ${figure}, worked out from what the provider reported (${cost.source}), is in another currency than the task's ${currency}, and no rate is known to convert it with; the estimate stands`;
  }
  if (Number.isSafeInteger(amount) && amount >= 0 && amount <= MOST_BILLED_MICROS) return null;
  return `no billed figure was recorded: ${Number.isFinite(amount) ? figure : String(amount)}, worked out from what the provider reported (${cost.source}), is not an amount one request can cost (from 0 to ${MOST_BILLED_MICROS / 1_000_000} ${currency}); the estimate stands`;
}

/** The result with a billed figure the stores can hold as a task's in `currency`: one they cannot is dropped, and why is kept beside it. */
export function storableResult(result: ProviderResult, currency: string): ProviderResult {
  const why = result.costActual && unstorable(result.costActual, currency);
  return why ? { ...result, costActual: null, costWhy: why } : result;
}

/** A failure with a billed figure the stores can hold as a task's in `currency`: its error says why none was recorded when it had one they cannot. */
export function storableFailure<T extends { error: string; costActual: ReportedCost | null }>(failed: T, currency: string): T {
  const why = failed.costActual && unstorable(failed.costActual, currency);
  return why ? { ...failed, error: `${failed.error}; ${why}`, costActual: null } : failed;
}

/**
 * Why a quote the provider gave at submit is not the task's estimate, or null when it is: one in another currency
 * than the task's `currency` is not used, and the estimate already on the row stands.
 */
export function unusableQuote(quote: Money, currency: string, provider: string): string | null {
  if (quote.currency === currency) return null;
  return `${provider}'s quote at submit, ${moneyWords(quote.amount, quote.currency)}, is in another currency than the task's ${currency}, and no rate is known to convert it with: not used as its estimate; the estimate already on the task stands`;
}

/** The cost fields of a result record. */
export function recordCost(result: ProviderResult): Pick<ResultRecord, 'costActual' | 'costSource' | 'costUnits' | 'costReported' | 'costWhy'> {
  const { costActual: cost, costWhy } = result;
  return { costActual: cost?.amount ?? null, costSource: cost?.source ?? null, costUnits: cost?.units ?? null, costReported: cost?.reported ?? null, costWhy: costWhy ?? null };
}
