import { useState } from 'react';
import type { EstimateView, NewTakeOptions, TakeView } from '../../../main/api/contract.ts';
import { mediaSrc, money, studio } from '../api.ts';
import { useAction, useLoad } from '../useLoad.ts';
import { simulatedPart } from './Estimate.tsx';
import { TakeCompare } from './TakeCompare.tsx';

/** One request per project and change, shared by every scene's strip. */
let shared: { key: string; takes: Promise<TakeView[]> } | null = null;
function projectTakes(project: string, version: number, tick: number): Promise<TakeView[]> {
  const key = JSON.stringify([project, version, tick]);
  if (shared?.key !== key) shared = { key, takes: studio.takes(project) };
  return shared.takes;
}

function cost(t: TakeView): string {
  const bought = t.steps.filter((s) => !s.reused);
  if (bought.length === 0) return 'reused';
  // The simulator's made-up money is never charged: said so, whole or in part (main/domain/simulated.ts).
  const sim = bought.filter((s) => s.provider === 'simulator').length;
  const mark = sim === 0 ? '' : sim === bought.length ? ', simulated' : ', part simulated';
  if (t.costBilled !== null) return `${money(t.costBilled, t.currency)} ${t.costBilledBasis}${mark}`;
  return t.costEstimated === null ? 'price unknown' : `${money(t.costEstimated, t.currency)} estimated${mark}`;
}

/** Its seeds: one when the image and clip were sent the same, else each. */
export function seedWords(t: TakeView): string {
  if (t.imageSeed === null || t.imageSeed === t.clipSeed) return `seed ${t.clipSeed ?? t.seed}`;
  return `image seed ${t.imageSeed} · clip seed ${t.clipSeed ?? '–'}`;
}

type Only = NonNullable<NewTakeOptions['only']>;
const ONLY_WORDS: Record<Only, { label: string; offer: string }> = {
  both: { label: 'Image and clip', offer: 'its image and clip again, with a new seed' },
  clip: { label: 'Clip only (keep the still)', offer: 'its clip again from the same still; nothing is bought for the still' },
  image: { label: 'Image only', offer: 'a new still, and its clip again since the clip is made from it' },
};

/** "your own picture (mine.png)", as the strip names what the scene renders in place of a take. */
const ownWords = (own: NonNullable<TakeView['yours']>) => `your own ${own.kind === 'image' ? 'picture' : 'clip'} (${own.name})`;

/** What a pick says when it put a take back in place of the creator's own still or clip; null otherwise. */
const pickedWords = (t: TakeView) =>
  t.replaced ? `Take ${t.take} is back in the render in place of ${ownWords(t.replaced)}, which the storyboard no longer names. Nothing was bought; the next Generate renders this take.` : null;

/**
 * A scene's takes as a strip: each take's image, what it cost and when it was made; the one in the render marked,
 * "Pick" on the others (it buys nothing), and "New take", which asks what it costs before it makes one.
 */
export function Takes({ project, scene, version, onSaved }: { project: string; scene: string; version: number; onSaved?: () => void }) {
  const [tick, setTick] = useState(0);
  const loaded = useLoad(() => projectTakes(project, version, tick), [version, tick], project);
  const [offer, setOffer] = useState<EstimateView | null>(null);
  const [only, setOnly] = useState<Only>('both');
  const [seed, setSeed] = useState('');
  const [variations, setVariations] = useState(1);
  const [comparing, setComparing] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  const takes = (loaded.data ?? []).filter((t) => t.scene === scene);
  const yours = takes[0]?.yours ?? null;
  // A new take of a scene with its own still makes its clip only; one with its own clip has nothing to make anew.
  const offered = (Object.keys(ONLY_WORDS) as Only[]).filter((k) => !yours || (yours.kind === 'image' && k === 'clip'));
  const made = offered.includes(only) ? only : offered[0]!;
  const choice = (): NewTakeOptions => ({ only: made, ...(seed.trim() === '' ? {} : { seed: Number(seed) }), ...(variations > 1 && yours?.kind !== 'image' ? { variations } : {}) });
  const pick = useAction();
  const make = useAction();
  const picked = (t: TakeView) => {
    setNote(pickedWords(t));
    setTick((n) => n + 1);
    // The pick saved the take's number and seeds into the storyboard, and took out the scene's own still or clip.
    onSaved?.();
  };
  if (takes.length === 0) return loaded.error ? <p className="error">{loaded.error}</p> : null;

  const ask = () =>
    void make.run(async () => {
      setOffer(await studio.estimate(project, [scene], choice()));
    });
  const go = () =>
    void make.run(async () => {
      setOffer(null);
      await studio.generate(project, [scene], choice());
      setTick((n) => n + 1);
      onSaved?.();
    });

  return (
    <section className="takes" aria-label={`Takes of ${scene}`} data-testid={`takes-${scene}`}>
      <div className="takes-head">
        <h3>Takes</h3>
        {takes.length > 1 && (
          <button onClick={() => setComparing(true)} aria-label={`Compare the takes of ${scene}`}>
            Compare
          </button>
        )}
      </div>
      {comparing && (
        <TakeCompare project={project} scene={scene} takes={takes} seeds={seedWords} cost={cost} onPicked={picked} onClose={() => setComparing(false)} />
      )}
      {yours && (
        <p className="take-yours" data-testid={`takes-yours-${scene}`}>
          <strong>{ownWords(yours)[0]!.toUpperCase() + ownWords(yours).slice(1)} is used</strong> in the render, not a take. Pick a take to use it instead; that buys nothing.
        </p>
      )}
      {note && (
        <p className="take-note" role="status">
          {note}
        </p>
      )}
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
            <span className="take-seed">{seedWords(t)}</span>
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
                      picked(await studio.pickTake(project, scene, t.take));
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
            This Generate makes {variations > 1 ? `${variations} new takes` : 'a new take'} of {scene} ({ONLY_WORDS[made].offer}{seed.trim() === '' ? '' : `, seed ${seed.trim()}`}) and costs about {money(offer.total, offer.currency)}
            {simulatedPart(offer.total, offer.simulatedTotal, offer.currency)}
            {offer.unpriced > 0 && <>, plus {offer.unpriced} step(s) of unknown price</>}. {yours ? `The new clip, made from ${ownWords(yours)}, goes into the render; it is no take, so the takes stay as they are.` : variations > 1 ? 'The first goes into the render; compare them and use the one you like. The earlier takes stay.' : 'The new take goes into the render; the earlier takes stay.'}{' '}
            This price is for this new take alone; the Estimate beside prices a Generate of the whole storyboard, which is apart from it.
          </p>
          <button className="primary" onClick={go} disabled={make.busy}>
            Make it
          </button>
          <button onClick={() => setOffer(null)}>Not now</button>
        </div>
      ) : offered.length === 0 ? (
        <p className="take-ask">A new take of {scene} needs a bought clip: pick a take, or take your own clip out of the scene.</p>
      ) : (
        <div className="take-ask">
          <button onClick={ask} disabled={make.busy} aria-label={`New take of ${scene}`}>
            {make.busy ? 'Starting…' : 'New take'}
          </button>
          <label>
            of
            <select aria-label={`What a new take of ${scene} makes again`} value={made} onChange={(e) => setOnly(e.target.value as Only)}>
              {offered.map((k) => (
                <option key={k} value={k}>
                  {ONLY_WORDS[k].label}
                </option>
              ))}
            </select>
          </label>
          <label title="The same seed with the same prompt makes the same take again, and buys nothing">
            seed
            <input className="seed" aria-label={`Seed of a new take of ${scene}`} type="number" min={0} step={1} placeholder="new" value={seed} onChange={(e) => setSeed(e.target.value)} />
          </label>
          {/* Clips made from your own still are no takes to compare and pick, so the studio refuses variations of them. */}
          {yours?.kind !== 'image' && (
            <label title="New takes made at once, each with its own seed: one price for all of them before anything is bought">
              variations
              <input aria-label={`Variations of a new take of ${scene}`} type="number" min={1} max={8} step={1} value={variations} onChange={(e) => setVariations(Math.min(8, Math.max(1, Math.round(Number(e.target.value) || 1))))} />
            </label>
          )}
        </div>
      )}
      {(pick.error ?? make.error) && (
        <p className="error" role="alert">
          {pick.error ?? make.error}
        </p>
      )}
    </section>
  );
}
