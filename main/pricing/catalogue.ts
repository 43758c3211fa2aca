import { creditPriceOf, creditWords, type CreditChoice } from './creditPlans.ts';
import { pricesFile } from './pricesFile.ts';
import type { Kind } from '../domain/tasks/model.ts';
import { toMicros } from '../domain/tasks/model.ts';
import { falMegapixelsPerImage } from './imageSizes.ts';

/** How a model is priced (resources/prices.json "about" says each rule in words). */
export type Pricing =
  | { per: 'image' | 'megapixel' | 'second' | 'character'; price: number }
  | { per: 'clip'; price: number; seconds: number; extraSecond: number }
  | { per: 'credit'; creditsPerCharacter: number }
  | { per: 'quality-size'; prices: Record<string, Record<string, number>> }
  /** A text model: USD per million input and output tokens. */
  | { per: 'token'; input: number; output: number }
  | { per: 'unknown'; why: string };

/** USD per million tokens, for the usage an answer reports. */
export interface TokenPrices {
  textInput: number;
  imageInput: number;
  imageOutput: number;
}

export interface CatalogueEntry {
  provider: string;
  /** One model's id: an entry never prices any other model. */
  model: string;
  kind: Kind;
  pricing: Pricing;
  tokens?: TokenPrices;
  currency: string;
  /** The page the figure was read from. */
  source: string;
  /** Whether that page is the provider's own. */
  official: boolean;
  /** When it was read. */
  date: string;
  note?: string;
}

/** The credits a request takes, and in words at the plan's price. */
export interface StepCredits {
  count: number;
  words: string;
}

/** Prices the person set for their plan: an ElevenLabs plan, or their own price per credit. */
export type PlanPrices = CreditChoice;

export interface Estimate {
  /** Micro-units of `currency`. */
  cost: number;
  currency: string;
  source: string;
  /** For a provider that bills in credits: how many, and in words ("180 credits at the Creator plan's 0.0003 USD a credit"). */
  credits?: StepCredits;
}

export function catalogue(): CatalogueEntry[] {
  return pricesFile().entries as CatalogueEntry[];
}

/**
 * The entry of exactly this model. A pinned Replicate version (`owner/name:<hash>`) has none: Replicate bills it by
 * time, not as its model per output (timeBilling.ts).
 */
export function entryFor(provider: string, model: string, kind: Kind, entries = catalogue()): CatalogueEntry | undefined {
  return entries.find((e) => e.provider === provider && e.kind === kind && e.model === model);
}

export type PriceUnit = 'image' | 'second' | 'character' | 'megapixel';

const DEFAULT_SECONDS: Partial<Record<Kind, number>> = { clip: 5 };

function imageCount(input: Record<string, unknown>): number {
  for (const key of ['num_images', 'num_outputs', 'n']) if (typeof input[key] === 'number') return input[key] as number;
  return 1;
}

function secondsOf(kind: Kind, input: Record<string, unknown>, fallback = DEFAULT_SECONDS[kind] ?? 1): number {
  const d = typeof input.duration === 'string' ? Number(input.duration) : input.duration;
  return typeof d === 'number' && Number.isFinite(d) ? d : fallback;
}

function characters(input: Record<string, unknown>): number {
  return String(input.text ?? input.input ?? '').length;
}

/**
 * The credits a text takes, at the model's credits a character, rounded up to a whole credit: a request is billed in
 * whole credits (its character-cost header is a whole number), so a half is never left out.
 */
export function creditsOf(input: Record<string, unknown>, perCharacter: number): number {
  return Math.ceil(characters(input) * perCharacter);
}

/** Megapixels as fal bills them: each image rounded up to whole megapixels of 1024 × 1024 pixels (falQuote.ts says why). */
function megapixels(input: Record<string, unknown>): number {
  return falMegapixelsPerImage(input.image_size) * imageCount(input);
}

/** How many priced units an input asks for, read from the fields the adapters send. */
export function unitsOf(unit: PriceUnit, kind: Kind, input: Record<string, unknown>): number {
  switch (unit) {
    case 'image':
      return imageCount(input);
    case 'second':
      return secondsOf(kind, input);
    case 'character':
      return characters(input);
    case 'megapixel':
      return megapixels(input);
  }
}

/** The most any cell of a quality-by-size table can cost, for a quality or size left to the model (`auto`). */
function tablePrice(prices: Record<string, Record<string, number>>, quality: unknown, size: unknown): { price: number; how: string } | null {
  const qualities = typeof quality === 'string' && quality !== 'auto' ? [quality] : Object.keys(prices);
  const cells = qualities.flatMap((q) => {
    const row = prices[q] ?? {};
    const sizes = typeof size === 'string' && size !== 'auto' ? [size] : Object.keys(row);
    return sizes.flatMap((s) => (row[s] === undefined ? [] : [{ price: row[s]!, how: `${q} ${s}` }]));
  });
  if (cells.length === 0) return null;
  const top = cells.reduce((a, b) => (b.price > a.price ? b : a));
  const left = [quality === undefined || quality === 'auto' ? 'quality' : '', size === undefined || size === 'auto' ? 'size' : ''].filter(Boolean);
  return left.length ? { price: top.price, how: `${top.how}, the most an image can cost with ${left.join(' and ')} left to the model` } : top;
}

/**
 * About four characters of English make a token (help.openai.com/en/articles/4936856-what-are-tokens-and-how-to-count-them):
 * the input is counted from the request's length, instructions and schema included; the output at the request's
 * `max_output_tokens` cap, the most it can be. The bill counts the tokens used, so it is at most this for the output.
 */
const CHARACTERS_PER_TOKEN = 4;

function draftTokens(p: { input: number; output: number }, input: Record<string, unknown>, c: string): { amount: number; how: string } | null {
  const cap = input.max_output_tokens;
  if (typeof cap !== 'number') return null;
  const { max_output_tokens: _, ...sent } = input;
  const tokensIn = Math.ceil(JSON.stringify(sent).length / CHARACTERS_PER_TOKEN);
  return {
    amount: (tokensIn * p.input + cap * p.output) / 1_000_000,
    how:
      `an estimate from the idea's length: about ${tokensIn} input tokens (about ${CHARACTERS_PER_TOKEN} characters a token) at ${p.input} ${c} per million, ` +
      `and at most ${cap} output tokens (the request's max_output_tokens cap) at ${p.output} ${c} per million; the bill counts the tokens used`,
  };
}

/** The amount and a sentence on how, or null where the entry gives no way to estimate. */
function priced(entry: CatalogueEntry, input: Record<string, unknown>, plan: PlanPrices): { amount: number; how: string; credits?: StepCredits } | null {
  const p = entry.pricing;
  const c = entry.currency;
  switch (p.per) {
    case 'image': {
      const n = imageCount(input);
      return { amount: p.price * n, how: `${n} image${n === 1 ? '' : 's'} at ${p.price} ${c} each` };
    }
    case 'megapixel': {
      const mp = megapixels(input);
      return { amount: p.price * mp, how: `${mp} megapixel${mp === 1 ? '' : 's'} (each image rounded up to whole megapixels of 1024×1024 pixels) at ${p.price} ${c} per megapixel` };
    }
    case 'second': {
      const s = secondsOf(entry.kind, input);
      return { amount: p.price * s, how: `${s} seconds at ${p.price} ${c} per second` };
    }
    case 'clip': {
      const s = secondsOf(entry.kind, input, p.seconds);
      const extra = Math.max(0, s - p.seconds);
      return { amount: p.price + extra * p.extraSecond, how: `${s} seconds: ${p.price} ${c} for the first ${p.seconds} and ${p.extraSecond} ${c} for each second beyond` };
    }
    case 'character': {
      const n = characters(input);
      return { amount: p.price * n, how: `${n} characters at ${p.price} ${c} each` };
    }
    case 'credit': {
      const credit = creditPriceOf(entry.provider, plan);
      if (!credit) return null;
      const credits = creditsOf(input, p.creditsPerCharacter);
      const words = creditWords(credits, credit);
      return { amount: credits * credit.price, how: `${words} (${p.creditsPerCharacter} a character); ${credit.source}`, credits: { count: credits, words } };
    }
    case 'quality-size': {
      const cell = tablePrice(p.prices, input.quality, input.size);
      if (!cell) return null;
      const n = imageCount(input);
      return { amount: cell.price * n, how: `${n} image${n === 1 ? '' : 's'} at ${cell.price} ${c} (${cell.how})` };
    }
    case 'token':
      return draftTokens(p, input, c);
    case 'unknown':
      return null;
  }
}

/** Where an entry's figures come from, for a source line. */
export function citation(entry: CatalogueEntry): string {
  return `${entry.source}${entry.official ? '' : ' (a third-party figure)'}, read ${entry.date}`;
}

/**
 * The catalogue's estimate for one task from the input as it will be sent, naming the entry it came from
 * and how old it is; null when the catalogue has no entry for the model or no way to estimate it.
 */
export function estimateFromCatalogue(provider: string, model: string, kind: Kind, input: unknown, plan: PlanPrices = {}): Estimate | null {
  const entry = entryFor(provider, model, kind);
  if (!entry || !input || typeof input !== 'object') return null;
  const price = priced(entry, input as Record<string, unknown>, plan);
  if (!price) return null;
  return { cost: toMicros(price.amount), currency: entry.currency, source: `catalogue: ${price.how}; ${citation(entry)}`, ...(price.credits ? { credits: price.credits } : {}) };
}
