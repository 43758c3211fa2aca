/** The settings views of the StudioApi (contract.ts): keys, engine values and team mode; types only, as the renderer reads them. */

import type { Kind } from './taskTypes.ts';
import type { CreditPlan } from '../pricing/creditPlans.ts';

/** Where a provider's key comes from; 'unreadable': kept encrypted here, but this machine's keyring cannot decrypt it. */
export type KeySource = 'settings' | 'environment' | 'keychain' | 'unreadable' | null;

export interface SettingsView {
  concurrency: Record<Kind, number>;
  leaseMs: number;
  pollDeadlineMs: number;
  ffmpegPath: string | null;
  /** Whether each provider has a key, and where it comes from; keys themselves never leave the engine. */
  keys: Record<string, KeySource>;
  /** False where keys can only be kept as plain text (Linux without a keyring). */
  keysEncrypted: boolean;
  /** Whether an admin key for fal is set (never the key): with one, fal's bills are read from its usage records. */
  falAdminKey: boolean;
  /** Ask before a Generate that costs more than this (currency units), or never when null. */
  confirmAbove: number | null;
  keepAwake: boolean;
  /** The budget check counts a step at its forecast from past bills where that is higher than its estimate. */
  budgetUsesForecast: boolean;
  /** The desktop app looks for an update at start, downloads it in the background and installs it at quit. */
  checkUpdatesAtStart: boolean;
  /** Team mode on this machine. */
  team: TeamView;
  /** The ElevenLabs plan credits are priced at, and the plans to pick from. */
  elevenlabsPlan: CreditPlanView;
}

/** A plan a provider that bills in credits offers, at its price per credit (resources/prices.json creditPlans). */
export interface CreditPlanChoice {
  plan: CreditPlan;
  title: string;
  price: number;
  currency: string;
  /** Which of the plan's figures the price is, and why. */
  why: string;
}

export interface CreditPlanView {
  /** The plan set, 'own' for the person's own price per credit, or null: none set (the default plan's price is used). */
  plan: CreditPlan | 'own' | null;
  ownPrice: number | null;
  /** The plan whose price is used when none is set. */
  defaultPlan: CreditPlan;
  plans: CreditPlanChoice[];
  /** Where the plans' prices come from, and when they were read. */
  source: string;
}

/** A plan picked, the person's own price per credit (USD), or null to set none. */
export type CreditPlanChange = { plan: CreditPlan } | { ownPrice: number } | null;

/** Where this studio keeps its tasks, and the team database and machine name saved for the next start. */
export interface TeamView {
  /** In use now: the database on this machine (its file), or the team database (its address, password hidden). */
  store: { kind: 'embedded' | 'team'; where: string };
  /** What named the team database in use: --db, STUDIO_DATABASE_URL or settings; null on the embedded one. */
  storeFrom: 'flag' | 'environment' | 'settings' | null;
  /** The team database saved in settings on this machine, password hidden; null when none is. */
  databaseUrl: string | null;
  /** The name this machine goes by now, in owner ids and on the files it saves. */
  machineName: string;
  /** The name saved in settings; null: the computer's own name. */
  savedMachineName: string | null;
  /** True when STUDIO_MACHINE_NAME sets the name, over settings. */
  machineNameFromEnvironment: boolean;
  /** The media folder in use now, where saved files go; null: none is set, and they go in the data folder. */
  mediaDir: string | null;
  /** The media folder saved in settings; null when none is. */
  savedMediaDir: string | null;
}

/** A change to team mode on this machine, used from the studio's next start; null removes the saved value. */
export interface TeamChange {
  /** postgres://user:password@host:5432/studio; null: the database on this machine. */
  databaseUrl?: string | null;
  machineName?: string | null;
  /** The media folder the team shares, where this machine mounts it (a full path); null: none. */
  mediaDir?: string | null;
}

export interface SettingsPatch {
  concurrency?: Partial<Record<Kind, number>>;
  leaseMs?: number;
  pollDeadlineMs?: number;
  confirmAbove?: number | null;
  keepAwake?: boolean;
  budgetUsesForecast?: boolean;
  checkUpdatesAtStart?: boolean;
  /** A provider's key, or null to remove it. */
  key?: { provider: string; value: string | null };
  /** The ElevenLabs plan, or the person's own price per credit; null sets none. */
  elevenlabsPlan?: CreditPlanChange;
  /** fal's ADMIN-scope key, only to read its usage records for the bills; null removes it. */
  falAdminKey?: string | null;
}
