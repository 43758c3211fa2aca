import { estimateFromCatalogue, type Estimate } from '../pricing/catalogue.ts';
import type { PreparedRequest, ProviderAdapter } from '../providers/port.ts';
import { toMicros } from '../domain/tasks/model.ts';
import { billedByTime, timeEstimate } from '../pricing/timeBilling.ts';

const QUOTE_TIMEOUT_MS = 5_000;

/** "provider model" to a price per request in USD, as the person set it in settings for a model with no documented price. */
export type OwnPrices = Record<string, number>;

/** The seconds the provider billed a model's latest runs here, newest first (TaskStore.recentBilledSeconds). */
export type PastSeconds = (provider: string, model: string) => Promise<number[]>;

/**
 * The estimate written on the row before the boundary: the provider's quote where it has an endpoint
 * for one, else the catalogue, else the price the person set; null when no price is known. A quote that
 * fails is no reason to stop; the catalogue answers instead. `canQuote` false (no key yet): no quote is asked.
 */
export async function estimateCost(provider: ProviderAdapter, request: PreparedRequest, own: OwnPrices = {}, canQuote = true, past?: PastSeconds): Promise<Estimate | null> {
  if (canQuote && provider.capabilities.quote === 'endpoint' && provider.quote) {
    try {
      const quote = await provider.quote(request, AbortSignal.timeout(QUOTE_TIMEOUT_MS));
      if (quote) return { cost: quote.amount, currency: quote.currency, source: `${provider.id} quote at submit time${quote.how ? `: ${quote.how}` : ''}` };
    } catch {
      // The catalogue below is the documented fallback.
    }
  }
  // A model billed by time is estimated from how long its earlier runs here were billed for.
  const timed = billedByTime(provider.id, request.model) && past ? timeEstimate(provider.id, await past(provider.id, request.model)) : null;
  if (timed) return timed;
  const catalogued = estimateFromCatalogue(provider.id, request.model, request.kind, request.input, provider.prices);
  if (catalogued) return catalogued;
  const key = `${provider.id} ${request.model}`;
  const price = Object.hasOwn(own, key) ? own[key] : undefined;
  return price === undefined ? null : { cost: toMicros(price), currency: 'USD', source: `your price for ${key}: ${price} USD per request (settings)` };
}
