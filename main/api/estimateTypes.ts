/** What a Generate would buy, as the StudioApi (contract.ts) shows it; types only, as the renderer reads them. */

import type { Kind } from './taskTypes.ts';

/** An earlier purchase of a step whose result is lost, or kept only by another machine. */
export interface LostResultView {
  taskId: number;
  /** Whether that purchase was certainly charged, or possibly. */
  paid: 'yes' | 'maybe';
  cost: number;
  currency: string;
  /** How the result was lost, or which machine has it and what to do. */
  why: string;
  /** The machine that keeps the result, when another machine does: then it is not lost, only not in this machine's media folder. */
  savedOn?: string;
  /** Each place on this machine its file was looked for, when it is lost. */
  looked?: string[];
}

export interface EstimateStep {
  key: string;
  scene: string | null;
  kind: Kind;
  provider: string;
  model: string;
  /** rebuy: paid for before and its result is lost; Generate buys it again only with `rebuyLost`. */
  action: 'new' | 'reuse' | 'rebuy' | 'yours';
  taskId: number | null;
  /** null: no price is known; never counted as 0 (see EstimateView.unpriced). */
  cost: number | null;
  currency: string;
  source: string;
  /** A provider that bills in credits (ElevenLabs): the credits the step takes, and in words at the plan's price. */
  credits?: { count: number; words: string };
  lost: LostResultView | null;
  /** The simulator's made-up price: never charged (also in EstimateView.simulatedTotal). */
  simulated: boolean;
  /** Its provider has no key yet: priced all the same; Generate asks for the key first. */
  keyMissing: MissingKeyView | null;
  /** Once the model has 5 billed runs: what its bills say this estimate comes to, and "usually bills 20 % over (5 billed runs)". */
  forecast?: { cost: number; runs: number; percent: number; words: string };
  /** The same model at each other provider the person has a key for, priced for this step. */
  offers?: ProviderOfferView[];
}

/** The same model at another provider, priced for one step, and whether the step can be moved there. */
export interface ProviderOfferView {
  provider: string;
  model: string;
  /** The model's name at every provider ("FLUX.1 [dev]"). */
  family: string;
  /** null: no price is known, or the step cannot be written for this provider. */
  cost: number | null;
  currency: string;
  /** Where the price comes from (the provider's quote, or the catalogue). */
  source: string;
  /** The provider's own page saying it is this model. */
  sameSource: string;
  /** null: the scene can be moved here; else why not. */
  notOffered: string | null;
  /** The scenes moved together: the step's own and each scene sharing its purchase. */
  scenes: string[];
  /** How much lower the new steps' total is after the move, from the whole plan; null when not worked out. */
  saving: number | null;
}

/** What moving to the cheaper provider changed: the storyboard's new revision and each step moved, with its price before and after. */
export interface CheapestView {
  revision: number;
  /** `sharedWith`: the scene whose purchase this scene's step shares, moved with it (its before and after are 0). */
  moves: { scene: string; kind: Kind; from: { provider: string; model: string }; to: { provider: string; model: string }; before: number; after: number; currency: string; sharedWith?: string }[];
  /** The new steps' total before and after the moves, each from the whole plan. */
  total: { before: number; after: number; currency: string };
}

/** A provider a Generate needs a key for: its name, and the variable the key can be set in besides Settings. */
export interface MissingKeyView {
  provider: string;
  title: string;
  variable: string;
}

/** What a new take of a scene makes again: its clip only (the still kept), its still (and so its clip), or both (default). */
export interface NewTakeOptions {
  only?: 'clip' | 'image' | 'both';
  /** The seed the steps made again are sent with; without it, the new take's own. */
  seed?: number;
  /** How many new takes of each named scene, 1 to 8, in one Generate with one estimate; each has seeds of its own. */
  variations?: number;
}

export interface GenerateOptions extends NewTakeOptions {
  /** The person confirmed buying again the steps whose paid result was lost; without it such a Generate is refused. */
  rebuyLost?: boolean;
  /** The person confirmed, for a budgeted project, the steps whose price is unknown; without it such a Generate is refused. */
  confirmUnpriced?: boolean;
}

export interface EstimateView {
  project: string;
  currency: string;
  steps: EstimateStep[];
  /** What the new steps of known price may cost. */
  total: number;
  /** The part of `total` that is the simulator's made-up money, never charged. */
  simulatedTotal: number;
  /** New steps priced in a currency other than the project's, per currency: never added to `total`. */
  otherCurrencies: { currency: string; total: number }[];
  /** Providers the new steps need with no key yet; Generate refuses, naming them, until they are added. */
  missingKeys: MissingKeyView[];
  /** How many new steps have no known price, left out of `total`. */
  unpriced: number;
  /** Earlier steps of the project, spent or enqueued, whose price is unknown: not in `spent`. */
  spentUnpriced: number;
  /** The budget held the new steps at their forecasts from past bills, above their estimates (settings "budgetUsesForecast"). */
  budgetByForecast: boolean;
  /** The budget held the project's earlier work with no bill yet at its forecasts too, as spent (the same setting). */
  budgetEarlierByForecast: boolean;
  /** Per provider of the new steps: what its account has left (where it tells an API key), and whether this Generate would pass it. */
  balances: { provider: string; text: string; over: boolean }[];
  /** Spent, possibly charged or enqueued; `spentSimulated` of it is the simulator's made-up money. */
  spent: number;
  spentSimulated: number;
  budget: number | null;
  /** What the budget has left after this Generate; real and simulated money are each held against it apart. */
  left: number | null;
  overBy: number;
  /**
   * Each narrated scene, predicted from its words before anything is bought: how long the narration should last,
   * the seconds the scene will fill, what a fit "scene" would cut (0 otherwise), and all of it in one plain line.
   * heldSec: seconds at the scene's end where its clip has run out and its last frame is held still.
   */
  narration: { scene: string; predictedSec: number; sceneSec: number; cutSec: number; heldSec: number; text: string }[];
  /** Each model to be used that cannot make the project's exact shape, and the nearest it makes, in one plain line. */
  shape: string[];
  /** The finished film foreseen: its length with the transitions' overlaps, and how it is finished, in plain words. */
  film: { seconds: number; scenesSec: number; overlapSec: number; text: string } | null;
}
