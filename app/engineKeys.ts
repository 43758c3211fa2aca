import type { KeySource } from '../main/api/contract.ts';
import { FAL_ADMIN_KEY_NAME, type KeyStore } from '../main/api/serviceContext.ts';
import type { Settings } from '../main/config/settings.ts';
import { keySource, PROVIDER_IDS } from '../main/providers/registry.ts';
import type { KeySnapshot } from './engineProtocol.ts';

/** Every name a key is stored under: each provider's, and fal's admin key. */
const KEY_NAMES = [...PROVIDER_IDS, FAL_ADMIN_KEY_NAME];

/**
 * The keys the engine process may use, read by the main process from its encrypted store (app/keys.ts). safeStorage
 * exists only in the main process (docs/api/safe-storage.md); the engine gets the keys it sends with, decrypted,
 * once per start, and never a way to have other ciphertext decrypted. keys.json is read and written only by the main
 * process.
 */
export function keySnapshot(store: { encrypted: boolean; get(name: string): string | undefined; source(name: string): KeySource }): KeySnapshot {
  const keys: Record<string, string | null> = {};
  for (const name of KEY_NAMES) {
    if (store.source(name) === 'unreadable') keys[name] = null;
    else {
      const key = store.get(name);
      if (key !== undefined) keys[name] = key;
    }
  }
  return { encrypted: store.encrypted, keys };
}

/**
 * The engine's key store over the main process's snapshot: read as app/keys.ts reads its file, and a key the person
 * enters is saved by the main process (encrypted there) before the engine uses it; a refusal there (a locked
 * keyring, a damaged keys.json) reaches the person and changes nothing here.
 */
export function relayedKeyStore(
  snapshot: KeySnapshot,
  settings: () => Settings,
  save: (name: string, value: string | null) => Promise<void>,
  env: NodeJS.ProcessEnv = process.env,
): KeyStore & { get(provider: string): string | undefined } {
  const keys = new Map(Object.entries(snapshot.keys));
  const get = (name: string) => keys.get(name) ?? undefined;
  return {
    encrypted: snapshot.encrypted,
    get,
    secret: (name) => get(name) ?? (name === FAL_ADMIN_KEY_NAME ? settings().providers.fal?.adminKey : undefined),
    source: (provider): KeySource => (keys.get(provider) === null ? 'unreadable' : keySource(provider, settings(), env, get)),
    set: async (name, value) => {
      await save(name, value);
      if (value === null) keys.delete(name);
      else keys.set(name, value);
    },
  };
}
