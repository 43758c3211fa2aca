import { updateSettings } from '../config/settings.ts';
import { keySource } from '../providers/registry.ts';
import type { Studio } from '../studio.ts';
import type { KeyStore } from './studioService.ts';
import { FAL_ADMIN_KEY_NAME } from './serviceContext.ts';

/**
 * Keys kept in settings.json, for hosts without an encrypted store (the loopback host, the CLI). The file is
 * written readable by its owner only; the UI says plainly that the keys are not encrypted.
 */
export function settingsKeyStore(studio: Studio, env: NodeJS.ProcessEnv = process.env): KeyStore {
  return {
    encrypted: false,
    source: (provider) => keySource(provider, studio.settings, env),
    secret: (name) => (name === FAL_ADMIN_KEY_NAME ? studio.settings.providers.fal?.adminKey : undefined),
    set: (provider, value) => {
      studio.settings = updateSettings(studio.dataDir, (raw) => {
        raw.providers ??= {};
        if (provider === FAL_ADMIN_KEY_NAME) raw.providers.fal = { ...raw.providers.fal, adminKey: value ?? undefined };
        else raw.providers[provider] = { ...raw.providers[provider], key: value ?? undefined };
      });
    },
  };
}
