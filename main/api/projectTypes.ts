/** The project list of the StudioApi (contract.ts); types only, as the renderer reads them. */

import type { SpendTotals } from './spendTypes.ts';
import type { Status } from './taskTypes.ts';

export interface ProjectSummary {
  id: number;
  name: string;
  currency: string;
  budget: number | null;
  /** Money the providers charge (or may). */
  spend: SpendTotals;
  /** The simulator's made-up money, never charged: apart from `spend`, never in it. */
  simulated: SpendTotals;
  counts: Partial<Record<Status, number>>;
}
