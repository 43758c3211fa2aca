/** The spend views of the StudioApi (contract.ts); types only, as the renderer reads them. */

export interface SpendTotals {
  /** Billed figures. */
  actual: number;
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
}

export interface ModelSpendView {
  provider: string;
  model: string;
  /** The simulator's made-up money, never charged. */
  simulated: boolean;
  tasks: number;
  billed: number;
  estimatedForBilled: number;
  billedUnestimated: number;
  estimatedOnly: number;
  possiblyCharged: number;
}

export interface ProjectSpendView {
  name: string;
  currency: string;
  billed: number;
  estimated: number;
  possiblyCharged: number;
  budget: number | null;
  /** billed + estimated + possibly charged, over the budget; null without a budget (or with a budget of 0). */
  shareUsed: number | null;
  /** The part of billed, estimated and possibly charged that is the simulator's made-up money, never charged. */
  simulated: SpendTotals;
}

export interface ProviderSpendView {
  provider: string;
  currency: string;
  /** The simulator's made-up money, never charged. */
  simulated: boolean;
  billed: number;
  estimated: number;
  possiblyCharged: number;
}

export interface SpendOverview {
  projects: ProjectSpendView[];
  byProvider: ProviderSpendView[];
  byModel: (ModelSpendView & { currency: string })[];
}
