import type { CallTimeouts } from './providerHttp.ts';

/** What an adapter is given: its key (settings, else the provider's usual variable) and where to find it. */
export interface AdapterConfig {
  key: string | null;
  /** Overrides the provider's own address, to point an adapter at a local stand-in. */
  baseUrl: string | null;
  timeouts?: Partial<CallTimeouts>;
  /** USD per credit on the person's plan, for a provider that bills in credits (ElevenLabs). */
  creditPrice?: number | null;
}

/** A provider's entry in the settings file. */
export interface ProviderSettings {
  /** Kept as typed here; the desktop app keeps keys encrypted and hands them over at start. */
  key?: string;
  baseUrl?: string;
  timeouts?: Partial<CallTimeouts>;
  /** ElevenLabs: what one credit costs on the person's plan, in USD; without it the catalogue's default is used. */
  creditPrice?: number;
}

/** The part of the settings the providers read. */
export interface ProvidersSettings {
  providers: Record<string, ProviderSettings>;
}
