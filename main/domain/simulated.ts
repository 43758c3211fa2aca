/**
 * The simulator's costs are made up, so that a budget and an estimate can be tried without paying: they are
 * money that is never charged, shown apart from real money and never summed into it without saying so.
 */
export const SIMULATOR = 'simulator';

export const isSimulated = (provider: string): boolean => provider === SIMULATOR;

/** Spend figures, in micro-units: billed, estimated with no bill yet, possibly charged. */
export interface SpendParts {
  actual: number;
  estimated: number;
  possiblyCharged: number;
}

/** Per-provider spend split into real money and the simulator's made-up money, each summed apart. */
export function splitSimulated(rows: ReadonlyArray<SpendParts & { provider: string }>): { real: SpendParts; simulated: SpendParts } {
  const real = { actual: 0, estimated: 0, possiblyCharged: 0 };
  const simulated = { actual: 0, estimated: 0, possiblyCharged: 0 };
  for (const r of rows) {
    const into = isSimulated(r.provider) ? simulated : real;
    into.actual += r.actual;
    into.estimated += r.estimated;
    into.possiblyCharged += r.possiblyCharged;
  }
  return { real, simulated };
}
