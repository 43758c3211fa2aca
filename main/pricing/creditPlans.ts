import { pricesFile } from './pricesFile.ts';

/** The plans a person can pick for a provider that bills in credits (ElevenLabs), as resources/prices.json lists them. */
export const CREDIT_PLANS = ['free', 'starter', 'creator', 'pro', 'scale', 'business'] as const;
export type CreditPlan = (typeof CREDIT_PLANS)[number];

export const isCreditPlan = (value: unknown): value is CreditPlan => (CREDIT_PLANS as readonly unknown[]).includes(value);

/**
 * The person's own price per credit, in USD, is between these. Money is kept in micro-units, so a credit priced below
 * one would let narration count as next to nothing against a budget; above 1 USD a credit is a typo (the dearest plan's
 * is well below a cent).
 */
export const CREDIT_PRICE_MIN = 0.000001;
export const CREDIT_PRICE_MAX = 1;

export const isCreditPrice = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value) && value >= CREDIT_PRICE_MIN && value <= CREDIT_PRICE_MAX;

/** How to write an own price per credit, for errors: "a number from 0.000001 to 1 (USD per credit, such as 0.0003)". */
export const CREDIT_PRICE_WORDS = `a number from ${CREDIT_PRICE_MIN.toFixed(6)} to ${CREDIT_PRICE_MAX} (USD per credit, such as 0.0003)`;

/** What the person set for a provider that bills in credits: their plan, or their own price per credit (which wins). */
export interface CreditChoice {
  plan?: CreditPlan | null;
  /** USD per credit, the person's own figure (the older setting providers.elevenlabs.creditPrice). */
  creditPrice?: number | null;
}

export interface CreditPrice {
  price: number;
  currency: string;
  /** Whose price it is, in words: "the Creator plan's", "your own". */
  whose: string;
  /** The plan it is, when it is one of the plans. */
  plan: CreditPlan | null;
  source: string;
}

interface PlanEntry {
  title: string;
  price: number;
  why: string;
}

interface PlanTable {
  default: CreditPlan;
  plans: Record<CreditPlan, PlanEntry>;
  currency: string;
  source: string;
  official: boolean;
  date: string;
}

function table(provider: string): PlanTable | null {
  return (pricesFile().creditPlans?.[provider] as PlanTable | undefined) ?? null;
}

/** Each plan's title and price per credit, for a picker. */
export function creditPlans(provider: string): { plan: CreditPlan; title: string; price: number; currency: string; why: string }[] {
  const t = table(provider);
  return t ? CREDIT_PLANS.map((plan) => ({ plan, ...t.plans[plan], currency: t.currency })) : [];
}

/**
 * The price of one credit: the person's own price, else their plan's, else the default plan's (the dearest a credit
 * costs, see prices.json), each with where it comes from.
 */
export function creditPriceOf(provider: string, choice: CreditChoice = {}): CreditPrice | null {
  const t = table(provider);
  const currency = t?.currency ?? 'USD';
  if (typeof choice.creditPrice === 'number') return { price: choice.creditPrice, currency, whose: 'your own', plan: null, source: 'the price per credit you set in settings' };
  if (!t) return null;
  const plan = choice.plan ?? t.default;
  const entry = t.plans[plan];
  const read = `${t.source}${t.official ? '' : ' (as transcribed by third parties)'}, read ${t.date}`;
  const source = choice.plan
    ? `the ${entry.title} plan set in settings: ${entry.why}; ${read}`
    : `no plan set in settings, so the ${entry.title} plan's (${entry.why}); ${read}; pick your plan in settings`;
  return { price: entry.price, currency, whose: `the ${entry.title} plan's`, plan, source };
}

/** "180 credits at the Creator plan's 0.0003 USD a credit". */
export function creditWords(credits: number, price: CreditPrice): string {
  return `${credits} credit${credits === 1 ? '' : 's'} at ${price.whose} ${price.price} ${price.currency} a credit`;
}

/**
 * The plan an account's subscription tier names (GET /v1/user/subscription `tier`, a string ElevenLabs' OpenAPI gives
 * no list of; its examples are "starter" and "trial"), or null for a tier that is none of the plans.
 */
export function planOfTier(tier: unknown): CreditPlan | null {
  if (typeof tier !== 'string') return null;
  const t = tier.toLowerCase();
  if (t === 'trial') return 'free';
  return CREDIT_PLANS.find((p) => t === p || t.startsWith(`${p}_`) || t.startsWith(`${p} `)) ?? null;
}
