/** What a Generate would do and cost, step by step: the shapes the estimate, the API and the CLI share. */
import type { Project } from '../domain/project.ts';
import type { MissingKeyNote } from './missingKeys.ts';
import type { PlannedStep } from './planner.ts';
import type { NarrationNote } from './narrationLengths.ts';
import type { FilmNote } from './filmNote.ts';
import type { Forecast } from './forecast.ts';
import type { StepChoice } from '../domain/storyboard.ts';

/** An earlier purchase of a step whose result is lost, or kept only by another machine. */
export interface LostResult {
  taskId: number;
  /** Whether that purchase was certainly charged, or possibly. */
  paid: 'yes' | 'maybe';
  /** What it cost (billed, else estimated), in micro-units of `currency`. */
  cost: number;
  currency: string;
  /** How the result was lost, or which machine has it and what to do. */
  why: string;
  /** The machine that keeps the result, when another machine does: then it is not lost, only not here. */
  savedOn?: string;
  /** Each place a lost result's file was looked for on this machine. */
  looked?: string[];
}

export interface StepEstimate {
  key: string;
  scene: string | null;
  kind: PlannedStep['kind'];
  provider: string;
  model: string;
  /**
   * reuse: an identical step already in the project stands in for it, at no cost. rebuy: it was paid for
   * and its result is lost, or not on this machine; it is bought again only when the person confirms it.
   * yours: the scene's image is the creator's own still; nothing is bought for it.
   */
  action: 'new' | 'reuse' | 'rebuy' | 'yours';
  taskId: number | null;
  /** Micro-units of `currency`; 0 for reused and local steps; null when no price is known (never counted as 0). */
  cost: number | null;
  currency: string;
  source: string;
  /** A provider that bills in credits: the credits the step takes, and in words, beside the money. */
  credits?: { count: number; words: string };
  /** For a rebuy: the purchase whose result was lost. */
  lost: LostResult | null;
  /** The simulator's made-up price: never charged, and counted in `simulatedTotal` as well as `total`. */
  simulated: boolean;
  /** A new step whose provider has no key yet: priced all the same, and Generate asks for the key. */
  keyMissing: MissingKeyNote | null;
  /** The earlier step of this Generate it is one purchase with (sameSteps.ts): nothing more is bought for it. */
  sameAs?: string;
  /** What the model's past bills say this estimate comes to, once it has enough of them (forecast.ts). */
  forecast?: Forecast;
  /** The same model at the other providers the person has a key for, each priced for this step (sameModelOffers.ts). */
  offers?: ProviderOffer[];
}

export interface GenerateEstimate {
  project: Project;
  steps: StepEstimate[];
  /** What the new steps of known price may cost. */
  total: number;
  /** The part of `total` that is the simulator's made-up money, never charged. */
  simulatedTotal: number;
  /**
   * What the budget check held the new steps at: `total` and `simulatedTotal`, each raised where a forecast is higher
   * and settings "budgetUsesForecast" is on (`byForecast` then says so). `earlier`: how far the same setting raised the
   * project's earlier work with no bill yet above its estimates (`earlierSimulated` of it simulated), held as spent.
   */
  held: { total: number; simulated: number; byForecast: boolean; earlier: number; earlierSimulated: number };
  /** New steps priced in a currency other than the project's, per currency: never added to `total`. */
  otherCurrencies: { currency: string; total: number }[];
  /** Providers the new steps need with no key yet; Generate is refused until they are added. */
  missingKeys: MissingKeyNote[];
  /** New steps whose price is unknown, left out of `total`; a budgeted project refuses them unless confirmed. */
  unpriced: StepEstimate[];
  /** What the project has spent, may have spent, or has enqueued and not sent yet; `spentSimulated` of it is simulated. */
  spent: number;
  spentSimulated: number;
  /** Earlier steps of the project, spent or enqueued, whose price is unknown: not in `spent`. */
  spentUnpriced: number;
  budget: number | null;
  /** What the budget has left after this Generate, for the kind of money nearest to it (see budgetCheck); null without one. */
  left: number | null;
  /** How far past the budget this Generate would go, or 0. */
  overBy: number;
  /** Per provider of the new steps: what its account has left, where it tells an API key, or that it does not. */
  balances: BalanceNote[];
  /** Each narrated scene's predicted narration length, the scene's length beside it, and what would be cut. */
  narration: NarrationNote[];
  /** Each model to be used that cannot make the project's exact shape, and the nearest it makes. */
  shape: string[];
  /** The finished film foreseen: its length with the transitions' overlaps, its subtitles, music and loudness. */
  film: FilmNote | null;
  /**
   * The takes this Generate added, one per scene it made anew; each is now the one its scene renders. `already`: a
   * new take asked for that an earlier take is (the same steps, seeds included), picked again, with its seeds.
   */
  takes: { scene: string; take: number; already?: { image: number; clip: number } }[];
}

export interface BalanceNote {
  provider: string;
  text: string;
  /** This Generate would pass the account's limit for the period. */
  over: boolean;
}

/** The same model at another provider, priced for one step (sameModelOffers.ts). */
export interface ProviderOffer {
  provider: string;
  model: string;
  /** The model's name at every provider ("FLUX.1 [dev]"). */
  family: string;
  /** Micro-units of `currency`; null when no price is known, or the step cannot be written for this provider. */
  cost: number | null;
  currency: string;
  /** Where the price comes from: the provider's quote or the catalogue, as for any step. */
  source: string;
  /** The provider's own page saying it is this model. */
  sameSource: string;
  /** What the scene's step becomes when moved here. */
  choice: StepChoice;
  /** Null: the scene can be moved here as it is; else why not, in plain words. */
  notOffered: string | null;
  /** The scenes moved together: the step's own and each scene sharing its purchase (sameSteps.ts). */
  scenes: string[];
  /**
   * How much lower the new steps' total is with the move made, from the whole plan after it (moveSavings.ts), in
   * micro-units of the project's currency; null when it was not worked out (no price, another currency, or no move).
   */
  saving: number | null;
}
