import { estimateFromCatalogue } from '../pricing/catalogue.ts';
import type { Kind } from '../tasks/model.ts';

/** The simulator quotes its catalogue price, in micro-USD; what it bills differs a little, as real bills do. */
export function quoteFor(kind: Kind, input: Record<string, unknown>): number {
  return estimateFromCatalogue('simulator', '*', kind, input)?.cost ?? 0;
}
