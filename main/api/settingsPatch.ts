import { MAX_BUDGET } from '../domain/project.ts';
import { KINDS } from '../domain/tasks/model.ts';
import type { SettingsPatch } from './contract.ts';
import { CREDIT_PLANS, isCreditPlan } from '../pricing/creditPlans.ts';

/** A settings change the API cannot take, with the field and what it takes. */
export class PatchRefused extends Error {}

const FIELDS = ['concurrency', 'leaseMs', 'pollDeadlineMs', 'confirmAbove', 'keepAwake', 'budgetUsesForecast', 'key', 'falAdminKey', 'elevenlabsPlan'];

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

/** A plan among ElevenLabs' plans, or an own price per credit above 0 and at most 1 USD, or null. */
function checkPlanChange(value: unknown): void {
  if (value === null) return;
  const v = value as Record<string, unknown>;
  if (v && typeof v === 'object' && 'plan' in v && isCreditPlan(v.plan)) return;
  if (v && typeof v === 'object' && 'ownPrice' in v && typeof v.ownPrice === 'number' && Number.isFinite(v.ownPrice) && v.ownPrice > 0 && v.ownPrice <= 1) return;
  throw new PatchRefused(`elevenlabsPlan must be {"plan": one of ${CREDIT_PLANS.join(', ')}}, {"ownPrice": your price per credit in USD, above 0 and at most 1}, or null`);
}
