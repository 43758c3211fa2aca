import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Kind } from '../tasks/model.ts';
import { toMicros } from '../tasks/model.ts';

export type PriceUnit = 'image' | 'second' | 'character' | 'megapixel' | 'request';

export interface CatalogueEntry {
  provider: string;
  /** One model's id: an entry never prices any other model. */
  model: string;
  kind: Kind;
  unit: PriceUnit;
  price: number;
  currency: string;
  source: string;
  date: string;
}

export interface Estimate {
  /** Micro-units of `currency`. */
  cost: number;
  currency: string;
  source: string;
}

const CATALOGUE_PATH = fileURLToPath(new URL('../../resources/prices.json', import.meta.url));

let loaded: CatalogueEntry[] | null = null;

export function catalogue(): CatalogueEntry[] {
  loaded ??= (JSON.parse(readFileSync(CATALOGUE_PATH, 'utf8')) as { entries: CatalogueEntry[] }).entries;
  return loaded;
}

export function entryFor(provider: string, model: string, kind: Kind, entries = catalogue()): CatalogueEntry | undefined {
  return entries.find((e) => e.provider === provider && e.kind === kind && e.model === model);
}

const DEFAULT_SECONDS: Partial<Record<Kind, number>> = { clip: 5 };

/**
 * How many priced units an input asks for, read from the fields generative APIs commonly use: fal's
 * num_images, OpenAI's n, Replicate's num_outputs (billed per output image, replicate.com/black-forest-labs/flux-schnell).
 */
export function unitsOf(unit: PriceUnit, kind: Kind, input: Record<string, unknown>): number {
  const asked = [input.num_images, input.n, input.num_outputs].find((v) => typeof v === 'number');
  const count = typeof asked === 'number' ? asked : 1;
  switch (unit) {
    case 'image':
      return count;
    case 'second':
      return typeof input.duration === 'number' ? input.duration : (DEFAULT_SECONDS[kind] ?? 1);
    case 'character':
      return String(input.text ?? input.input ?? '').length;
    case 'megapixel': {
      const w = typeof input.width === 'number' ? input.width : 1024;
      const h = typeof input.height === 'number' ? input.height : 1024;
      return ((w * h) / 1_000_000) * count;
    }
    case 'request':
      return 1;
  }
}

/** The catalogue's estimate for one task, naming the entry it came from and how old that entry is. */
export function estimateFromCatalogue(provider: string, model: string, kind: Kind, input: unknown): Estimate | null {
  const entry = entryFor(provider, model, kind);
  if (!entry || !input || typeof input !== 'object') return null;
  return {
    cost: toMicros(entry.price * unitsOf(entry.unit, kind, input as Record<string, unknown>)),
    currency: entry.currency,
    source: `catalogue: ${entry.source}, ${entry.price} ${entry.currency} per ${entry.unit} (read ${entry.date})`,
  };
}
