/**
 * The simulator's costs are made up, so that a budget and an estimate can be tried without paying: they are
 * money that is never charged, shown apart from real money and never summed into it without saying so.
 */
export const SIMULATOR = 'simulator';

export const isSimulated = (provider: string): boolean => provider === SIMULATOR;

/**
 * Spend figures, in micro-units: actual (from what the provider reported; billed + countedFromUsage, see
 * costBasis.ts), estimated with no reported figure yet, possibly charged.
 */
export interface SpendParts {
  actual: number;
  billed: number;
  countedFromUsage: number;
  estimated: number;
  possiblyCharged: number;
}

/** Per-provider spend split into real money and the simulator's made-up money, each summed apart. */
export function splitSimulated(rows: ReadonlyArray<SpendParts & { provider: string }>): { real: SpendParts; simulated: SpendParts } {
  const real = { actual: 0, billed: 0, countedFromUsage: 0, estimated: 0, possiblyCharged: 0 };
  const simulated = { actual: 0, billed: 0, countedFromUsage: 0, estimated: 0, possiblyCharged: 0 };
  for (const r of rows) {
    const into = isSimulated(r.provider) ? simulated : real;
    into.actual += r.actual;
    into.billed += r.billed;
    into.countedFromUsage += r.countedFromUsage;
    into.estimated += r.estimated;
    into.possiblyCharged += r.possiblyCharged;
  }
  return { real, simulated };
}

/** One kind of money in a project: what is spent, possibly charged or enqueued, and what a Generate adds. */
export interface MoneyUse {
  spent: number;
  added: number;
}

/**
 * A budget holds real money and the simulator's made-up money apart: each kind is checked against the whole
 * budget on its own, so simulated spend never uses up a budget meant for money that is charged, and a budget can
 * still be tried with the simulator alone. Only the kinds this Generate adds to are judged (simulated spend already
 * past the budget does not stop a Generate that adds only real money, nor the other way round; with nothing added,
 * every kind used): `left` is what remains for the one nearest the budget, `overBy` how far it goes past.
 */
export function budgetCheck(budget: number, real: MoneyUse, simulated: MoneyUse): { left: number; overBy: number } {
  const total = (k: MoneyUse) => k.spent + k.added;
  const adding = [real, simulated].filter((k) => k.added > 0);
  const most = Math.max(0, ...(adding.length > 0 ? adding : [real, simulated]).map(total));
  return { left: budget - most, overBy: adding.length > 0 ? Math.max(0, most - budget) : 0 };
}
