import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const PRICES_PATH = fileURLToPath(new URL('../../resources/prices.json', import.meta.url));

let loaded: Record<string, any> | null = null;

/** resources/prices.json as written, read once: each pricing module reads its own key of it. */
export function pricesFile(): Record<string, any> {
  loaded ??= JSON.parse(readFileSync(PRICES_PATH, 'utf8')) as Record<string, any>;
  return loaded;
}
