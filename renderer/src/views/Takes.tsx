import { useState } from 'react';
import type { EstimateView, TakeView } from '../../../main/api/contract.ts';
import { mediaSrc, money, studio } from '../api.ts';
import { useAction, useLoad } from '../useLoad.ts';

/** One request per project and change, shared by every scene's strip. */
let shared: { key: string; takes: Promise<TakeView[]> } | null = null;
function projectTakes(project: string, version: number, tick: number): Promise<TakeView[]> {
  const key = JSON.stringify([project, version, tick]);
  if (shared?.key !== key) shared = { key, takes: studio.takes(project) };
  return shared.takes;
}

function cost(t: TakeView): string {
  if (t.steps.every((s) => s.reused)) return 'reused';
  if (t.costBilled !== null) return `${money(t.costBilled, t.currency)} billed`;
  return t.costEstimated === null ? 'price unknown' : `${money(t.costEstimated, t.currency)} estimated`;
}

/**
 * A scene's takes as a strip: each take's image, what it cost and when it was made; the one in the render marked,
 * "Pick" on the others (it buys nothing), and "New take", which asks what it costs before it makes one.
 */
export function Takes({ project, scene, version }: { project: string; scene: string; version: number }) {
  const [tick, setTick] = useState(0);
  const loaded = useLoad(() => projectTakes(project, version, tick), [version, tick], project);
  const [offer, setOffer] = useState<EstimateView | null>(null);
  const pick = useAction();
  const make = useAction();
  const takes = (loaded.data ?? []).filter((t) => t.scene === scene);
  if (takes.length === 0) return loaded.error ? <p className="error">{loaded.error}</p> : null;

  const ask = () =>
    void make.run(async () => {
      setOffer(await studio.estimate(project, [scene]));
    });
  const go = () =>
    void make.run(async () => {
      setOffer(null);
      await studio.generate(project, [scene]);
      setTick((n) => n + 1);
    });

  return (
    <section className="takes" aria-label={`Takes of ${scene}`} data-testid={`takes-${scene}`}>
      <h3>Takes</h3>
      <ol className="take-strip">
        {takes.map((t) => (
          <li key={t.take} className={t.picked ? 'take picked' : 'take'} data-testid={`take-${scene}-${t.take}`} data-state={t.state} aria-current={t.picked ? 'true' : undefined}>
            {t.imageUrl ? (
              <img src={mediaSrc(t.imageUrl)} alt={`take ${t.take} of ${scene}: ${t.imagePrompt}`} />
            ) : (
              <div className="take-empty">{t.state === 'ready' ? 'no image' : t.state}</div>
            )}
            <span className="take-name">
              Take {t.take}
              {t.picked && <strong> · in the render</strong>}
            </span>
            <span className="take-cost">{cost(t)}</span>
            {t.state !== 'ready' && !t.problem && <span className="take-state">{t.state}…</span>}
            <time dateTime={t.createdAt} title={`seed ${t.seed}; ${t.steps.map((s) => `${s.kind}: ${s.provider} ${s.model}`).join(', ')}`}>
              {new Date(t.createdAt).toLocaleString()}
            </time>
            {t.problem ? (
              <small className="warning">Cannot go into the render: {t.problem}</small>
            ) : (
              !t.picked && (
                <button
                  disabled={pick.busy}
                  aria-label={`Pick take ${t.take} of ${scene}`}
                  onClick={() =>
                    void pick.run(async () => {
                      await studio.pickTake(project, scene, t.take);
                      setTick((n) => n + 1);
                    })
                  }
                >
                  Pick
                </button>
              )
            )}
          </li>
        ))}
      </ol>
      {offer ? (
        <div className="take-offer" role="group" aria-label={`New take of ${scene}`}>
          <p>
            This Generate makes a new take of {scene} (its image and clip again, with a new seed) and costs about {money(offer.total, offer.currency)}
            {offer.unpriced > 0 && <>, plus {offer.unpriced} step(s) of unknown price</>}. The new take goes into the render; the earlier takes stay.
          </p>
          <button className="primary" onClick={go} disabled={make.busy}>
            Make it
          </button>
          <button onClick={() => setOffer(null)}>Not now</button>
        </div>
      ) : (
        <button onClick={ask} disabled={make.busy} aria-label={`New take of ${scene}`}>
          New take
        </button>
      )}
      {(pick.error ?? make.error) && (
        <p className="error" role="alert">
          {pick.error ?? make.error}
        </p>
      )}
    </section>
  );
}
