import { MAX_BUDGET } from '../domain/project.ts';
import { KINDS } from '../domain/tasks/model.ts';
import type { SettingsPatch } from './contract.ts';
import { CREDIT_PLANS, CREDIT_PRICE_WORDS, isCreditPlan, isCreditPrice } from '../pricing/creditPlans.ts';

/** A settings change the API cannot take, with the field and what it takes. */
export class PatchRefused extends Error {}

const FIELDS = ['concurrency', 'leaseMs', 'pollDeadlineMs', 'confirmAbove', 'keepAwake', 'budgetUsesForecast', 'checkUpdatesAtStart', 'key', 'falAdminKey', 'elevenlabsPlan'];

function whole(value: unknown, where: string, min: number, max: number): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new PatchRefused(`${where} must be a whole number from ${min} to ${max}, not ${JSON.stringify(value)}`);
  }
}

/**
 * Checks a settings change as it comes over the API (a page or the loopback host), every field before any
 * is written, so a bad one changes nothing. Bounds keep a typo from stopping the engine.
 */
export function checkSettingsPatch(value: unknown): SettingsPatch {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new PatchRefused('a settings change must be an object');
  const patch = value as Record<string, unknown>;
  for (const key of Object.keys(patch)) {
    if (!FIELDS.includes(key)) throw new PatchRefused(`settings have no field "${key}" that can be changed here; they are ${FIELDS.join(', ')}`);
  }
  if (patch.concurrency !== undefined) {
    const c = patch.concurrency;
    if (!c || typeof c !== 'object' || Array.isArray(c)) throw new PatchRefused('concurrency must be an object like {"image": 4}');
    for (const [kind, n] of Object.entries(c)) {
      if (!(KINDS as readonly string[]).includes(kind)) throw new PatchRefused(`concurrency has no kind "${kind}"; the kinds are ${KINDS.join(', ')}`);
      whole(n, `concurrency.${kind}`, 0, kind === 'render' ? 1 : 32);
    }
  }
  if (patch.leaseMs !== undefined) whole(patch.leaseMs, 'leaseMs', 1_000, 3_600_000);
  if (patch.pollDeadlineMs !== undefined) whole(patch.pollDeadlineMs, 'pollDeadlineMs', 60_000, 7 * 24 * 3_600_000);
  if (patch.confirmAbove !== undefined && patch.confirmAbove !== null) {
    const n = patch.confirmAbove;
    if (typeof n !== 'number' || !Number.isFinite(n) || n < 0 || n > MAX_BUDGET) throw new PatchRefused(`confirmAbove must be an amount from 0 to ${MAX_BUDGET}, or null`);
  }
  if (patch.keepAwake !== undefined && typeof patch.keepAwake !== 'boolean') throw new PatchRefused('keepAwake must be true or false');
  if (patch.budgetUsesForecast !== undefined && typeof patch.budgetUsesForecast !== 'boolean') throw new PatchRefused('budgetUsesForecast must be true or false');
  if (patch.checkUpdatesAtStart !== undefined && typeof patch.checkUpdatesAtStart !== 'boolean') throw new PatchRefused('checkUpdatesAtStart must be true or false');
  if (patch.elevenlabsPlan !== undefined) checkPlanChange(patch.elevenlabsPlan);
  if (patch.key !== undefined) {
    const k = patch.key as Record<string, unknown> | null;
    if (!k || typeof k !== 'object' || typeof k.provider !== 'string') throw new PatchRefused('key must be {"provider": "fal", "value": "..."}');
    if (k.value !== null && (typeof k.value !== 'string' || !k.value.trim() || k.value.length > 500 || /\s/.test(k.value))) {
      throw new PatchRefused('key.value must be the key as the provider shows it (no spaces, at most 500 characters), or null to remove it');
    }
  }
  const admin = patch.falAdminKey;
  if (admin !== undefined && admin !== null && (typeof admin !== 'string' || !admin.trim() || admin.length > 500 || /\s/.test(admin))) {
    throw new PatchRefused("falAdminKey must be fal's admin key as fal shows it (no spaces, at most 500 characters), or null to remove it");
  }
  return patch as SettingsPatch;
}

/**
 * A plan among ElevenLabs' plans, or an own price per credit (CREDIT_PRICE_MIN to CREDIT_PRICE_MAX USD), or null.
 * One of the two, never both: applyCreditPlan writes an own price that wins over the plan, so each is checked whenever present.
 */
function checkPlanChange(value: unknown): void {
  if (value === null) return;
  const shapes = `{"plan": one of ${CREDIT_PLANS.join(', ')}}, {"ownPrice": ${CREDIT_PRICE_WORDS}}, or null`;
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new PatchRefused(`elevenlabsPlan must be ${shapes}`);
  const v = value as Record<string, unknown>;
  const extra = Object.keys(v).filter((k) => k !== 'plan' && k !== 'ownPrice');
  if (extra.length > 0) throw new PatchRefused(`elevenlabsPlan has no field "${extra[0]}"; it must be ${shapes}`);
  if ('plan' in v && 'ownPrice' in v) {
    throw new PatchRefused(`elevenlabsPlan takes either "plan" or "ownPrice", not both: send {"plan": "${String(v.plan)}"} to use the plan's price, or {"ownPrice": ...} alone for your own`);
  }
  if ('plan' in v && !isCreditPlan(v.plan)) throw new PatchRefused(`elevenlabsPlan.plan must be one of ${CREDIT_PLANS.join(', ')}, not ${JSON.stringify(v.plan)}`);
  if ('ownPrice' in v && !isCreditPrice(v.ownPrice)) throw new PatchRefused(`elevenlabsPlan.ownPrice must be ${CREDIT_PRICE_WORDS}, not ${JSON.stringify(v.ownPrice)}`);
  if (!('plan' in v) && !('ownPrice' in v)) throw new PatchRefused(`elevenlabsPlan must be ${shapes}`);
}
