import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiError, type KeyStore } from '../main/api/studioService.ts';
import { FAL_ADMIN_KEY_NAME } from '../main/api/serviceContext.ts';
import type { KeySource } from '../main/api/contract.ts';
import { writePrivateFile } from '../main/config/privateFile.ts';
import type { Settings } from '../main/config/settings.ts';
import { keySource } from '../main/providers/registry.ts';

/** The part of Electron's safeStorage this store uses (injected, so the store runs without Electron). */
export interface Encryptor {
  isEncryptionAvailable(): boolean;
  encryptString(plain: string): Buffer;
  decryptString(cipher: Buffer): string;
  getSelectedStorageBackend?(): string;
  setUsePlainTextEncryption?(usePlainText: boolean): void;
}

/**
 * Provider keys encrypted with the operating system's store (Keychain, DPAPI, libsecret/kwallet) in
 * `<data>/keys.json`. They are decrypted only in the main process and never sent to the page.
 *
 * On Linux with no keyring Electron selects the `basic_text` backend, under which encryption is available
 * only after setUsePlainTextEncryption(true) (docs/api/safe-storage.md); the store opts in so a key can be
 * saved, and `encrypted` is false so the settings page says keys are stored readable.
 *
 * A key that cannot be decrypted (the keyring changed, or a dev build and the installed app use different
 * keychain items) is reported as unreadable for that provider, never a start-up failure; a paid step with
 * no usable key is refused before anything is sent.
 */
export function safeKeyStore(dataDir: string, crypto: Encryptor, settings: () => Settings, env: NodeJS.ProcessEnv = process.env): KeyStore & { get(provider: string): string | undefined } {
  const file = join(dataDir, 'keys.json');
  const read = (): Record<string, string> => {
    if (!existsSync(file)) return {};
    let all: unknown;
    try {
      all = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      all = null;
    }
    if (!all || typeof all !== 'object' || Array.isArray(all)) {
      throw new ApiError(`${file} is damaged, so the keys in it cannot be read; it was left as it is. Move it away, then enter the keys again in Settings`);
    }
    return all as Record<string, string>;
  };
  const plainText = crypto.getSelectedStorageBackend?.() === 'basic_text';
  if (plainText) crypto.setUsePlainTextEncryption?.(true);
  const encrypted = crypto.isEncryptionAvailable() && !plainText;
  /** The stored key decrypted; undefined when none is stored, null when one is stored but cannot be read here. */
  const open = (provider: string): string | null | undefined => {
    let stored: string | undefined;
    try {
      stored = read()[provider];
    } catch {
      return null;
    }
    if (!stored) return undefined;
    try {
      return crypto.decryptString(Buffer.from(stored, 'base64'));
    } catch {
      return null;
    }
  };
  const get = (provider: string) => open(provider) ?? undefined;
  return {
    encrypted,
    get,
    // An admin key written in settings.json by hand still counts; one entered in the app is encrypted here.
    secret: (name) => get(name) ?? (name === FAL_ADMIN_KEY_NAME ? settings().providers.fal?.adminKey : undefined),
    source: (provider): KeySource => (open(provider) === null ? 'unreadable' : keySource(provider, settings(), env, get)),
    set: (provider, value) => {
      const all = read();
      if (value === null) delete all[provider];
      else {
        try {
          all[provider] = crypto.encryptString(value).toString('base64');
        } catch (err) {
          throw new ApiError(`the system's key store would not encrypt the key (${(err as Error).message}); nothing was saved. Unlock the keyring, or set ${provider}'s key in its environment variable`);
        }
      }
      writePrivateFile(file, JSON.stringify(all));
    },
  };
}
