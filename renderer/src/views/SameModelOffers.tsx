import type { EstimateStep, ProviderOfferView } from '../../../main/api/contract.ts';
import { money } from '../api.ts';

/** An offer the step can move to now: the same model, in the step's currency, for less. */
export function cheaper(s: EstimateStep, o: ProviderOfferView): boolean {
  return o.notOffered === null && o.cost !== null && s.cost !== null && o.currency === s.currency && o.cost < s.cost;
}

/** Under a step's row: its model's forecast from past bills, once there are enough of them. */
export function ForecastRow({ step }: { step: EstimateStep }) {
  if (!step.forecast) return null;
  return (
    <tr className="forecast">
      <td />
      <td colSpan={3} data-testid={`forecast-${step.key}`}>
        forecast {money(step.forecast.cost, step.currency)}: {step.forecast.words}
      </td>
    </tr>
  );
}

/** Under a step's row: the same model at each other provider with a key, its price and source, and a move when it is cheaper. */
export function OfferRows({ step, busy, move }: { step: EstimateStep; busy: boolean; move: (scene: string) => void }) {
  return (
    <>
      {(step.offers ?? []).map((o) => (
        <tr key={`${step.key} ${o.provider}`} className="offer" data-testid={`offer-${step.key}-${o.provider}`}>
          <td />
          <td colSpan={3}>
            <div>
              The same model ({o.family}) at {o.provider}: <strong>{o.cost === null ? 'price unknown' : money(o.cost, o.currency)}</strong>{' '}
              <span className="source-words" title={`the same model: ${o.sameSource}`}>
                ({o.source})
              </span>
            </div>
            {o.notOffered !== null ? (
              <div className="note">Not offered: {o.notOffered}</div>
            ) : cheaper(step, o) ? (
              <button disabled={busy} onClick={() => move(step.scene!)}>
                Move {step.scene} to {o.provider}, about {money(step.cost! - o.cost!, o.currency)} less
              </button>
            ) : null}
          </td>
        </tr>
      ))}
    </>
  );
}
