/** The ElevenLabs plan in settings, as the API shows and changes it (providers.elevenlabs.plan / creditPrice). */
import type { ProviderSettings } from '../providers/config.ts';
import { creditPlans } from '../pricing/creditPlans.ts';
import { pricesFile } from '../pricing/pricesFile.ts';
import type { CreditPlanChange, CreditPlanView } from './settingsTypes.ts';

const PROVIDER = 'elevenlabs';

export function creditPlanView(own: ProviderSettings | undefined): CreditPlanView {
  const t = pricesFile().creditPlans[PROVIDER];
  const ownPrice = typeof own?.creditPrice === 'number' ? own.creditPrice : null;
  return {
    // An older settings file's creditPrice is the person's own price per credit, and wins over a plan.
    plan: ownPrice !== null ? 'own' : (own?.plan ?? null),
    ownPrice,
    defaultPlan: t.default,
    plans: creditPlans(PROVIDER),
    source: `${t.source}${t.official ? '' : ' (as copied by third parties, named in the studio\'s price list)'}, read ${t.date}`,
  };
}

/** Writes a plan change into the raw settings: a plan clears an own price, an own price keeps the plan aside. */
export function applyCreditPlan(raw: Record<string, any>, change: CreditPlanChange): void {
  raw.providers ??= {};
  const now: Record<string, unknown> = { ...raw.providers[PROVIDER] };
  delete now.plan;
  delete now.creditPrice;
  if (change && 'plan' in change) now.plan = change.plan;
  if (change && 'ownPrice' in change) now.creditPrice = change.ownPrice;
  raw.providers[PROVIDER] = now;
}
