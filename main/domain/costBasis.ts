import type { ReportedUnit, Task } from './tasks/model.ts';

/**
 * What a task's cost figure rests on, in the words a person reads:
 * - billed: the provider reported the money or the credits it charged for the request;
 * - counted from usage: the provider reported what it bills by (images, seconds of run time, tokens) and the studio
 *   priced that at the catalogue's price, which is close to the bill but is not the provider's own figure;
 * - estimated: accepted, and no figure came back, so the estimate stands;
 * - possibly charged: the outcome is unknown (or a person sent it again), so it may have been charged;
 * - not charged: the provider documents the failure as free, it was cancelled before it was sent, or it was made here;
 * - price unknown: no figure and no estimate.
 */
export const COST_BASES = ['billed', 'counted from usage', 'estimated', 'possibly charged', 'not charged', 'price unknown'] as const;
export type CostBasis = (typeof COST_BASES)[number];

/** What a provider reports as its bill, rather than a count the studio prices. */
export const BILL_UNITS: readonly ReportedUnit[] = ['money', 'credit'];

/**
 * Providers whose actual cost was a bill before what they reported was kept (tasks with no `costReported`): the
 * simulator's "cost" field is money and ElevenLabs reports credits. Every other provider's older actual was counted
 * from usage (Replicate's images, OpenAI's tokens).
 */
export const BILLING_PROVIDERS: readonly string[] = ['simulator', 'elevenlabs'];

/** Whether a task's actual cost is the provider's bill (money or credits it reported), as opposed to counted from usage. */
export function isBill(t: Pick<Task, 'provider' | 'costReported'>): boolean {
  return t.costReported ? BILL_UNITS.includes(t.costReported) : BILLING_PROVIDERS.includes(t.provider);
}

/** The one decision of what a task's cost figure rests on (the CLI, the API's task view and the app all show this). */
export function costBasis(t: Pick<Task, 'kind' | 'provider' | 'costActual' | 'costReported' | 'costEstimated' | 'charged' | 'status'>): CostBasis {
  // A render is made on this machine, at no charge.
  if (t.kind === 'render') return 'not charged';
  if (t.charged === 'no' && (t.status === 'FAILED' || t.status === 'CANCELLED')) return 'not charged';
  if (t.costActual !== null) return isBill(t) ? 'billed' : 'counted from usage';
  if (t.costEstimated === null) return 'price unknown';
  return t.charged === 'maybe' ? 'possibly charged' : 'estimated';
}

/** What "billed" and "counted from usage" mean, said the same in `studio spend`, the spend view and docs/money.md. */
export const BASIS_WORDS =
  'Billed is money or credits a provider reported charging; counted from usage is what a provider reported it bills by ' +
  "(images, seconds of run time, tokens) at the catalogue's price, close to the bill but not the provider's own figure. " +
  'The totals and the budget count both.';
