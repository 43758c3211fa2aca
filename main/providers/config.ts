import type { CallTimeouts } from '../http/providerHttp.ts';

/** What an adapter is given: its key (settings, else the provider's usual variable) and where to find it. */
export interface AdapterConfig {
  key: string | null;
  /** Overrides the provider's own address, to point an adapter at a local stand-in. */
  baseUrl: string | null;
  timeouts?: Partial<CallTimeouts>;
  /** USD per credit on the person's plan, for a provider that bills in credits (ElevenLabs). */
  creditPrice?: number | null;
}
