import { estimateFromCatalogue } from '../pricing/catalogue.ts';
import type { Kind } from '../domain/tasks/model.ts';

/** The simulator quotes its catalogue price, in micro-USD; what it bills differs a little, as real bills do. */
export function quoteFor(kind: Kind, model: string, input: Record<string, unknown>): number {
  return estimateFromCatalogue('simulator', model, kind, input)?.cost ?? 0;
}
