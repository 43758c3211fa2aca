import type { CreditPlan } from '../pricing/creditPlans.ts';
import type { CallTimeouts } from './providerHttp.ts';

/** What an adapter is given: its key (settings, else the provider's usual variable) and where to find it. */
export interface AdapterConfig {
  key: string | null;
  /** Overrides the provider's own address, to point an adapter at a local stand-in. */
  baseUrl: string | null;
  timeouts?: Partial<CallTimeouts>;
  /** USD per credit on the person's plan, for a provider that bills in credits (ElevenLabs): their own figure. */
  creditPrice?: number | null;
  /** The plan they picked, priced from the catalogue; their own creditPrice wins. */
  plan?: CreditPlan | null;
}

/** A provider's entry in the settings file. */
export interface ProviderSettings {
  /** Kept as typed here; the desktop app keeps keys encrypted and hands them over at start. */
  key?: string;
  baseUrl?: string;
  timeouts?: Partial<CallTimeouts>;
  /** ElevenLabs: their own price of one credit, in USD; it wins over `plan`. */
  creditPrice?: number;
  /** ElevenLabs: the plan they are on, priced per credit from the catalogue (resources/prices.json creditPlans). */
  plan?: CreditPlan;
  /** fal: an ADMIN-scope key, used only to read fal's usage records for the bills (main/engine/falBills.ts); never sent with a request. */
  adminKey?: string;
}

/** The part of the settings the providers read. */
export interface ProvidersSettings {
  providers: Record<string, ProviderSettings>;
}
