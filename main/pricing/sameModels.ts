import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** One provider's id for a model, with the provider's own page that says which model it is. */
export interface SameModelEntry {
  provider: string;
  model: string;
  source: string;
  date: string;
  says: string;
}

/** A model offered by several providers: resources/prices.json "sameModels". */
export interface SameModelFamily {
  family: string;
  maker: string;
  models: SameModelEntry[];
}

const CATALOGUE_PATH = fileURLToPath(new URL('../../resources/prices.json', import.meta.url));

let loaded: SameModelFamily[] | null = null;

export function sameModelFamilies(): SameModelFamily[] {
  loaded ??= (JSON.parse(readFileSync(CATALOGUE_PATH, 'utf8')) as { sameModels?: { families: SameModelFamily[] } }).sameModels?.families ?? [];
  return loaded;
}

/** The family a provider's model belongs to, and the same model at each other provider; null when no other offers it. */
export function sameModelElsewhere(provider: string, model: string, families = sameModelFamilies()): { family: SameModelFamily; others: SameModelEntry[] } | null {
  // Matched by the exact id: a pinned Replicate version (`owner/name:<hash>`) runs its pin's build, which need not be the family's.
  const family = families.find((f) => f.models.some((m) => m.provider === provider && m.model === model));
  if (!family) return null;
  const others = family.models.filter((m) => m.provider !== provider);
  return others.length > 0 ? { family, others } : null;
}
