import { useEffect, useState } from 'react';
import type { CreditPlanView, SettingsPatch } from '../../../main/api/contract.ts';

/** The ElevenLabs plan, for pricing its credits: one of its plans, or the person's own price per credit. */
export function CreditPlan({ view, apply }: { view: CreditPlanView; apply: (patch: SettingsPatch) => void }) {
  const [choice, setChoice] = useState<string>(view.plan ?? '');
  const [own, setOwn] = useState(view.ownPrice === null ? '' : String(view.ownPrice));
  useEffect(() => {
    setChoice(view.plan ?? '');
    setOwn(view.ownPrice === null ? '' : String(view.ownPrice));
  }, [view.plan, view.ownPrice]);
  const fallback = view.plans.find((p) => p.plan === view.defaultPlan)!;
  const picked = view.plans.find((p) => p.plan === choice);
  const ownPrice = Number(own);
  const ownValid = own !== '' && Number.isFinite(ownPrice) && ownPrice > 0 && ownPrice <= 1;
  const change = choice === '' ? null : choice === 'own' ? { ownPrice } : { plan: picked!.plan };
  return (
    <>
      <h3>ElevenLabs plan</h3>
      <div className="row">
        <label htmlFor="elevenlabs-plan">Price credits at</label>
        <select id="elevenlabs-plan" aria-label="ElevenLabs plan" value={choice} onChange={(e) => setChoice(e.target.value)}>
          <option value="">no plan set ({fallback.title}: {fallback.price} {fallback.currency} a credit)</option>
          {view.plans.map((p) => (
            <option key={p.plan} value={p.plan}>
              {p.title}: {p.price} {p.currency} a credit
            </option>
          ))}
          <option value="own">my own price per credit</option>
        </select>
        {choice === 'own' && (
          <input type="number" aria-label="Your price per credit (USD)" min={0} max={1} step={0.00001} placeholder="USD a credit" value={own} onChange={(e) => setOwn(e.target.value)} />
        )}
        <button disabled={choice === 'own' && !ownValid} onClick={() => apply({ elevenlabsPlan: change })}>
          Save plan
        </button>
      </div>
      <p className="note" data-testid="elevenlabs-plan-why">
        {picked ? `${picked.title}: ${picked.why}. ` : choice === 'own' ? 'Your own price is used for every ElevenLabs credit. ' : `With no plan set, credits are priced at the ${fallback.title} plan's price, the dearest a credit costs, so no estimate is too low. `}
        ElevenLabs reports the credits each request used; the studio shows them beside the money. Prices from {view.source}.
      </p>
    </>
  );
}
