import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiError, type KeyStore } from '../main/api/studioService.ts';
import type { Settings } from '../main/config/settings.ts';
import { keySource } from '../main/providers/registry.ts';

/** The part of Electron's safeStorage this store uses (injected, so the store runs without Electron). */
export interface Encryptor {
  isEncryptionAvailable(): boolean;
  encryptString(plain: string): Buffer;
  decryptString(cipher: Buffer): string;
  getSelectedStorageBackend?(): string;
}

/**
 * Provider keys encrypted with the operating system's store (Keychain, DPAPI, libsecret/kwallet) in
 * `<data>/keys.json`. They are decrypted only in the main process and never sent to the page. Where Linux
 * falls back to plain text, `encrypted` is false and the settings page says so.
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
  const encrypted = crypto.isEncryptionAvailable() && crypto.getSelectedStorageBackend?.() !== 'basic_text';
  // A key that cannot be read is no key: the studio still starts, and a paid step without one is refused
  // before anything is sent. Saving a key over a damaged file is refused (read throws), so no key is lost.
  const get = (provider: string) => {
    try {
      const stored = read()[provider];
      return stored ? crypto.decryptString(Buffer.from(stored, 'base64')) : undefined;
    } catch {
      return undefined;
    }
  };
  return {
    encrypted,
    get,
    source: (provider) => keySource(provider, settings(), env, get),
    set: (provider, value) => {
      const all = read();
      if (value === null) delete all[provider];
      else all[provider] = crypto.encryptString(value).toString('base64');
      writeFileSync(`${file}.tmp`, JSON.stringify(all), { mode: 0o600 });
      renameSync(`${file}.tmp`, file);
    },
  };
}
