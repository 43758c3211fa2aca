/** The spend views of the StudioApi (contract.ts); types only, as the renderer reads them. */

export interface SpendTotals {
  /** Figures from what the providers reported: billed + countedFromUsage (docs/money.md). */
  actual: number;
  /** Money or credits the provider reported as charged. */
  billed: number;
  /** What the provider reported it bills by (images, seconds, tokens), priced at the catalogue's price. */
  countedFromUsage: number;
  /** Accepted work with no billed figure yet. */
  estimated: number;
  /** Requests whose outcome is unknown, and attempts a person resubmitted. */
  possiblyCharged: number;
}

export interface SpendRowView {
  day: string;
  provider: string;
  /** The simulator's made-up money, never charged. */
  simulated: boolean;
  actual: number;
  billed: number;
  countedFromUsage: number;
  estimated: number;
  possiblyCharged: number;
}

export interface SpendReport {
  project: string;
  currency: string;
  /** Real and simulated money together; `real` and `simulated` give each apart, as a person should read them. */
  totals: SpendTotals;
  /** Money the providers charge (or may). */
  real: SpendTotals;
  /** The simulator's made-up money, never charged. */
  simulated: SpendTotals;
  rows: SpendRowView[];
  /** Per provider and model: billed against what the same requests had been estimated at. */
  byModel: ModelSpendView[];
  /** Money of this project in other currencies than `currency`, per currency: in none of the figures above. */
  otherCurrencies: (SpendTotals & { currency: string })[];
  /** Bills read from a provider's usage records for this view (fal's, with an admin key), and what came of it. */
  bills?: BillReading[];
}

/** A reading of a provider's usage records: `off` without the key it needs, `failed` when nothing could be read (nothing changed). */
export interface BillReading {
  provider: string;
  state: 'off' | 'read' | 'failed' | 'reading';
  message: string;
}

export interface ModelSpendView {
  provider: string;
  model: string;
  /** The simulator's made-up money, never charged. */
  simulated: boolean;
  tasks: number;
  /** Money or credits the provider reported as charged. */
  billed: number;
  /** What the provider reported it bills by, priced at the catalogue's price. */
  countedFromUsage: number;
  /** What the requests billed or counted from usage had been estimated at. */
  estimatedForBilled: number;
  billedUnestimated: number;
  estimatedOnly: number;
  possiblyCharged: number;
  /** Enqueued and not sent yet, at its estimate: not spent, but held against the budget. */
  queued: number;
}

export interface ProjectSpendView {
  name: string;
  currency: string;
  billed: number;
  countedFromUsage: number;
  estimated: number;
  possiblyCharged: number;
  budget: number | null;
  /** billed + counted from usage + estimated + possibly charged, over the budget; null without a budget (or with a budget of 0). */
  shareUsed: number | null;
  /** The part of billed, counted from usage, estimated and possibly charged that is the simulator's made-up money, never charged. */
  simulated: SpendTotals;
}

export interface ProviderSpendView {
  provider: string;
  currency: string;
  /** The simulator's made-up money, never charged. */
  simulated: boolean;
  billed: number;
  countedFromUsage: number;
  estimated: number;
  possiblyCharged: number;
}

export interface SpendOverview {
  projects: ProjectSpendView[];
  byProvider: ProviderSpendView[];
  byModel: (ModelSpendView & { currency: string })[];
}
