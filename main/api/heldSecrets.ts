import { secretsIn } from '../logging/redact.ts';
import { PROVIDER_IDS } from '../providers/registry.ts';
import type { Studio } from '../studio.ts';
import { FAL_ADMIN_KEY_NAME, type KeyStore } from './serviceContext.ts';

/**
 * Every key a studio holds, for its logs and diagnostics to cut: in settings (and the team database's password
 * there), from the command line's --db, in the key store (the desktop's encrypted keys, fal's admin key). The
 * environment's are the Redaction's own (main/logging/redact.ts).
 */
export function heldSecrets(studio: Pick<Studio, 'settings'>, keys: Pick<KeyStore, 'secret'> & { get?(provider: string): string | undefined }, database?: string) {
  return [...secretsIn(studio.settings), ...secretsIn(database), ...PROVIDER_IDS.map((id) => keys.get?.(id)), keys.secret(FAL_ADMIN_KEY_NAME)];
}
