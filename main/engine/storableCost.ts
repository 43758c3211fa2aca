import type { ResultRecord } from '../domain/ports.ts';
import type { ProviderResult, ReportedCost } from '../providers/port.ts';

/**
 * The most one request's billed figure may be, in micro-units: a million of its currency. No request to a generative
 * API costs near that, so a larger figure is a misreading of what the provider reported; and below it a total of
 * thousands of rows stays within the integers JavaScript counts exactly (2^53 - 1), as PostgreSQL's bigint does, so
 * neither the write nor any later read of the row can fail over it.
 */
export const MOST_BILLED_MICROS = 1_000_000 * 1_000_000;

/** Why a billed figure cannot be stored, or null when it can. */
export function unstorable(cost: ReportedCost): string | null {
  const { amount, currency } = cost;
  if (Number.isSafeInteger(amount) && amount >= 0 && amount <= MOST_BILLED_MICROS) return null;
  const figure = Number.isFinite(amount) ? `${amount / 1_000_000} ${currency}` : String(amount);
  return `no billed figure was recorded: ${figure}, worked out from what the provider reported (${cost.source}), is not an amount one request can cost (from 0 to ${MOST_BILLED_MICROS / 1_000_000} ${currency}); the estimate stands`;
}

/** The result with a billed figure the stores can hold: one they cannot is dropped, and why is kept beside it. */
export function storableResult(result: ProviderResult): ProviderResult {
  const why = result.costActual && unstorable(result.costActual);
  return why ? { ...result, costActual: null, costWhy: why } : result;
}

/** A failure with a billed figure the stores can hold: its error says why none was recorded when it had one they cannot. */
export function storableFailure<T extends { error: string; costActual: ReportedCost | null }>(failed: T): T {
  const why = failed.costActual && unstorable(failed.costActual);
  return why ? { ...failed, error: `${failed.error}; ${why}`, costActual: null } : failed;
}

/** The cost fields of a result record. */
export function recordCost(result: ProviderResult): Pick<ResultRecord, 'costActual' | 'costSource' | 'costUnits' | 'costReported' | 'costWhy'> {
  const { costActual: cost, costWhy } = result;
  return { costActual: cost?.amount ?? null, costSource: cost?.source ?? null, costUnits: cost?.units ?? null, costReported: cost?.reported ?? null, costWhy: costWhy ?? null };
}
