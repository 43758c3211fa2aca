import type { EtaView, PlanStepView, ScenePlanView } from '../../../main/api/contract.ts';
import { mediaSrc, money, studio } from '../api.ts';
import { useLoad } from '../useLoad.ts';
import { LookedFor } from './LookedFor.tsx';
import { ownSrc, ownWords, type OwnMediaDraft } from './OwnPicture.tsx';
import { ShapedVideo } from './videoShape.tsx';

/** The project's plan per scene, fetched again at every change the engine makes, so previews fill in as work lands. */
export function useScenePlan(project: string, version: number, saved: unknown) {
  return useLoad<ScenePlanView>(() => studio.scenePlan(project), [version, saved], project);
}

/** When a running step is likely to end, from its model's past durations here; nothing without a history. */
function Eta({ eta }: { eta: EtaView | null | undefined }) {
  return eta ? <small className={`eta${eta.late ? ' late' : ''}`} data-testid="eta"> {eta.text}</small> : null;
}

/** Where one step stands, in words; a step waiting on another names it rather than showing a bar. */
export function StepState({ step }: { step: PlanStepView }) {
  const t = step.task;
  switch (step.state) {
    case 'waiting':
      return <span className="state waiting">waiting for: {step.waitingFor.join(', ')}</span>;
    case 'queued':
      return <span className="state queued">queued, to be sent when a slot is free</span>;
    case 'sending':
      return (
        <span className="state sending">
          sending to {step.provider}…<Eta eta={t?.eta} />
        </span>
      );
    case 'at the provider':
      return (
        <span className="state at-provider">
          at {step.provider}
          {t?.progress !== null && t?.progress !== undefined ? ` (${Math.round(t.progress * 100)}%)` : ''}
          <progress max={1} value={t?.progress ?? undefined} aria-label={`${step.label} progress`} />
          <Eta eta={t?.eta} />
          {t?.note && <small className="note"> {t.note}</small>}
        </span>
      );
    case 'ready':
      return (
        <span className="state ready">
          ready{t && (t.costActual ?? t.costEstimated) !== null ? ` · ${money(t.costActual ?? t.costEstimated, t.currency)} ${t.costBasis}` : ''}
          {t?.simulated && <span className="simulated"> simulated, never charged</span>}
        </span>
      );
    case 'needs your decision':
      return <span className="state decision">needs your decision: open “Needs your decision” above</span>;
    case 'paid, result lost':
      return (
        <span className="state lost">
          {step.lost?.paid === 'maybe' ? 'possibly paid' : 'paid'},{' '}
          {step.lost?.savedOn === undefined ? 'result lost' : `saved on machine '${step.lost.savedOn}', not in this machine's media folder`}: {step.lost?.why}
          {step.lost?.looked?.length ? <LookedFor places={step.lost.looked} /> : null}
          {step.lost ? ` (${money(step.lost.cost, step.lost.currency)})` : ''}
        </span>
      );
    case 'failed':
      return <span className="state failed">failed: {t?.error ?? 'no reason given'}</span>;
    case 'cancelled':
      return <span className="state failed">cancelled</span>;
    default:
      return <span className="state idle">not generated yet</span>;
  }
}

/** A scene's own still or clip in the preview, marked yours: the file when the app can show it, else its name. */
function Yours({ project, own, kind, scene }: { project: string; own: OwnMediaDraft; kind: 'image' | 'clip'; scene: string }) {
  const src = ownSrc(project, own);
  const label = `your ${kind === 'image' ? 'picture' : 'clip'} in the preview of ${scene}`;
  return (
    <figure className="preview-yours" data-testid={`preview-yours-${kind}`}>
      {!src && <div className="preview-empty">{ownWords(own)}</div>}
      {src && kind === 'image' && <img src={src} alt={label} className="preview-image" />}
      {src && kind === 'clip' && <ShapedVideo src={src} label={label} className="preview-clip" />}
      <figcaption>
        <span className="yours-mark">yours</span> {ownWords(own)}
      </figcaption>
    </figure>
  );
}

/**
 * A scene's current image, clip and narration as soon as each exists, and each step's state beside it. A scene's
 * own still or clip (`own`, as its storyboard names it) stands where the bought one would.
 */
export function ScenePreview({ scene, steps: planned, own }: { scene: string; steps: PlanStepView[] | undefined; own?: { project: string; image?: OwnMediaDraft; clip?: OwnMediaDraft } }) {
  // A scene that buys nothing has no steps in the plan, yet shows what is its own.
  if (!planned && !own?.image && !own?.clip) return null;
  const steps = planned ?? [];
  const of = (kind: PlanStepView['kind']) => steps.find((s) => s.kind === kind);
  const url = (s: PlanStepView | undefined) => (s?.state === 'ready' && s.task?.outputUrl ? mediaSrc(s.task.outputUrl) : null);
  const image = of('image');
  const clip = of('clip');
  const speech = of('speech');
  // An own clip stands for the image too: the scene buys neither.
  const ownImage = own?.clip ? undefined : own?.image;
  return (
    <div className="scene-preview" role="group" aria-label={`Preview of ${scene}`} data-testid={`preview-${scene}`}>
      <div className="scene-media">
        {ownImage ? <Yours project={own!.project} own={ownImage} kind="image" scene={scene} /> : url(image) ? <img src={url(image)!} alt={`image of ${scene}`} className="preview-image" /> : !own?.clip && <div className="preview-empty">image</div>}
        {own?.clip ? <Yours project={own.project} own={own.clip} kind="clip" scene={scene} /> : url(clip) ? <ShapedVideo src={url(clip)!} label={`clip of ${scene}`} className="preview-clip" /> : <div className="preview-empty">clip</div>}
        {speech && (url(speech) ? <audio src={url(speech)!} controls preload="metadata" aria-label={`narration of ${scene}`} /> : <div className="preview-empty audio">narration</div>)}
      </div>
      <ul className="step-states">
        {steps.map((s) => (
          <li key={s.key} data-testid={`step-${s.key}`} data-state={s.state}>
            <span className="kind">{s.kind === 'speech' ? 'narration' : s.kind}</span> <StepState step={s} />
          </li>
        ))}
      </ul>
    </div>
  );
}
