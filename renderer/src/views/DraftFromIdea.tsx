import { useEffect, useState } from 'react';
import type { DraftEstimateView } from '../../../main/api/contract.ts';
import { money, studio } from '../api.ts';
import { useAction } from '../useLoad.ts';

/** A draft's price, often a fraction of a cent, in the one way money is shown (see main/domain/money.ts). */
const price = (e: DraftEstimateView) => {
  if (e.reuses !== null) return `Costs nothing: this idea was drafted before (task ${e.reuses}), and that draft is used again.`;
  const by = `with ${e.provider === 'simulator' ? 'the simulator' : 'OpenAI'} ${e.model}`;
  if (e.cost === null) return `Estimate: price unknown ${by}.`;
  return `Estimate: about ${money(e.cost, e.currency)}${e.simulated ? " (simulated: the simulator's made-up money, never charged)" : ''} ${by}.`;
};

/**
 * "Draft from an idea": a paragraph becomes the storyboard's scenes through a text model, one paid step priced before
 * the button. Over a storyboard that has scenes it asks first, since the draft replaces them all; it is saved as the
 * next revision of the one shown, so an edit saved elsewhere meanwhile is never overwritten.
 */
export function DraftFromIdea({ project, revision, scenes, onDrafted }: { project: string; revision: number; scenes: number; onDrafted: () => void }) {
  const [idea, setIdea] = useState('');
  const [count, setCount] = useState(6);
  const [estimate, setEstimate] = useState<{ for: string; view: DraftEstimateView | null; error: string | null } | null>(null);
  const [confirming, setConfirming] = useState(false);
  const action = useAction();
  const asked = `${idea.trim()}\u0000${count}`;

  useEffect(() => {
    if (!idea.trim()) return setEstimate(null);
    let live = true;
    // Priced once typing pauses, as the draft would be sent.
    const timer = setTimeout(() => {
      studio.estimateDraft(project, { idea, scenes: count }).then(
        (view) => live && setEstimate({ for: asked, view, error: null }),
        (e: Error) => live && setEstimate({ for: asked, view: null, error: e.message }),
      );
    }, 300);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [project, asked]);

  const current = estimate?.for === asked ? estimate : null;
  const draft = () =>
    action.run(async () => {
      setConfirming(false);
      await studio.draftStoryboard(project, { idea, scenes: count, revision });
      setIdea('');
      onDrafted();
    });

  return (
    <section className="draft-from-idea" aria-label="Draft from an idea">
      <h3>Draft from an idea</h3>
      <label>
        Your idea, in a few sentences
        <textarea rows={4} value={idea} maxLength={4000} onChange={(e) => setIdea(e.target.value)} placeholder="A lighthouse keeper finds a message in a bottle…" />
      </label>
      <div className="row">
        <label>
          Scenes
          <input type="number" min={1} max={24} step={1} value={count} onChange={(e) => setCount(Math.max(1, Math.min(24, Math.round(Number(e.target.value) || 1))))} />
        </label>
        {current?.view && (
          <p className="note" data-testid="draft-estimate" title={current.view.source}>
            {price(current.view)}
          </p>
        )}
        {current?.error && <p className="error">{current.error}</p>}
      </div>
      {current?.view && current.view.reuses === null && <p className="note small">{current.view.source}</p>}
      {confirming ? (
        <div className="row" role="group" aria-label="Replace the storyboard?">
          <p className="note">
            The draft replaces all {scenes} scene{scenes === 1 ? '' : 's'} of this storyboard. What was already made for them stays in the library.
          </p>
          <button className="primary" disabled={action.busy} onClick={() => void draft()}>
            Replace storyboard
          </button>
          <button onClick={() => setConfirming(false)}>Keep it</button>
        </div>
      ) : (
        <button className="primary" disabled={!current?.view || action.busy} onClick={() => (scenes > 0 ? setConfirming(true) : void draft())}>
          {action.busy ? 'Drafting…' : 'Draft storyboard'}
        </button>
      )}
      {action.error && (
        <p className="error" role="alert" data-testid="draft-error">
          {action.error}
        </p>
      )}
    </section>
  );
}
