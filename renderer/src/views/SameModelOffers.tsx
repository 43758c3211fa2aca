import type { EstimateStep, ProviderOfferView } from '../../../main/api/contract.ts';
import { money } from '../api.ts';

/** An offer the step can move to now: the whole plan after the move costs less (the estimate worked it out). */
export function cheaper(o: ProviderOfferView): boolean {
  return o.notOffered === null && o.saving !== null && o.saving > 0;
}

const sceneWords = (scenes: string[]) => (scenes.length === 1 ? scenes[0] : `${scenes.slice(0, -1).join(', ')} and ${scenes.at(-1)} (one purchase)`);

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
            ) : cheaper(o) ? (
              <button disabled={busy} onClick={() => move(step.scene!)}>
                Move {sceneWords(o.scenes)} to {o.provider}, about {money(o.saving!, o.currency)} less in all
              </button>
            ) : null}
          </td>
        </tr>
      ))}
    </>
  );
}
