import { estimateFromCatalogue, type Estimate } from '../pricing/catalogue.ts';
import type { PreparedRequest, ProviderAdapter } from '../providers/port.ts';

const QUOTE_TIMEOUT_MS = 5_000;

/**
 * The estimate written on the row before the boundary: the provider's quote where it has an endpoint
 * for one, else the catalogue. A quote that fails is no reason to stop; the catalogue answers instead.
 */
export async function estimateCost(provider: ProviderAdapter, request: PreparedRequest): Promise<Estimate | null> {
  if (provider.capabilities.quote === 'endpoint' && provider.quote) {
    try {
      const quote = await provider.quote(request, AbortSignal.timeout(QUOTE_TIMEOUT_MS));
      if (quote) return { cost: quote.amount, currency: quote.currency, source: `${provider.id} quote at submit time` };
    } catch {
      // The catalogue below is the documented fallback.
    }
  }
  return estimateFromCatalogue(provider.id, request.model, request.kind, request.input, provider.prices);
}
