import type { TakeView } from '../../../main/api/contract.ts';
import { mediaSrc, studio } from '../api.ts';
import { Dialog } from '../Dialog.tsx';
import { useAction } from '../useLoad.ts';
import { useVideoShape } from './videoShape.tsx';

/** A take's clip playing on its own, muted and looping, in the video's shape; its still until the clip is made. */
function TakeMedia({ take, scene }: { take: TakeView; scene: string }) {
  const shape = useVideoShape();
  if (take.clipUrl) return <video {...shape} className="compare-media" src={mediaSrc(take.clipUrl)} autoPlay muted loop playsInline controls aria-label={`Clip of take ${take.take} of ${scene}`} />;
  if (take.imageUrl) return <img className="compare-media" src={mediaSrc(take.imageUrl)} alt={`Still of take ${take.take} of ${scene}: ${take.imagePrompt}`} />;
  return <div className="compare-media compare-empty">{take.state}</div>;
}

/** Takes per row: all of them in one row up to five, so none falls below the fold; more wrap in even rows. */
const columns = (n: number) => (n <= 5 ? n : Math.ceil(n / Math.ceil(n / 5)));

/**
 * A scene's takes side by side, large, to choose between: each one's clip, its seeds, what it cost and its state,
 * and "Use this take", which puts it into the render and buys nothing.
 */
export function TakeCompare(props: {
  project: string;
  scene: string;
  takes: TakeView[];
  seeds: (t: TakeView) => string;
  cost: (t: TakeView) => string;
  onPicked: (picked: TakeView) => void;
  onClose: () => void;
}) {
  const { project, scene, takes } = props;
  const pick = useAction();
  return (
    <Dialog title={`Takes of ${scene}, side by side`} onClose={props.onClose} closeButton className="wide take-compare" testId={`compare-${scene}`}>
      <ol className="compare-grid" style={{ gridTemplateColumns: `repeat(${columns(takes.length)}, minmax(0, 1fr))` }}>
        {takes.map((t) => (
          <li key={t.take} className={t.picked ? 'compare-card picked' : 'compare-card'} data-testid={`compare-${scene}-${t.take}`} aria-current={t.picked ? 'true' : undefined}>
            <TakeMedia take={t} scene={scene} />
            <div className="compare-facts">
              <span>
                <strong>Take {t.take}</strong>
                {t.picked && <span className="badge"> · in the render</span>}
              </span>
              <span>{props.seeds(t)}</span>
              <span>
                {props.cost(t)} · <span className={t.state === 'ready' ? undefined : 'take-state'}>{t.state}</span>
              </span>
            </div>
            {t.problem ? (
              <small className="warning">Cannot go into the render: {t.problem}</small>
            ) : t.picked ? (
              <button disabled>In the render</button>
            ) : (
              <button
                className="primary"
                disabled={pick.busy}
                aria-label={`Use take ${t.take} of ${scene}`}
                onClick={() =>
                  void pick.run(async () => {
                    props.onPicked(await studio.pickTake(project, scene, t.take));
                  })
                }
              >
                Use this take
              </button>
            )}
          </li>
        ))}
      </ol>
      {pick.error && (
        <p className="error" role="alert">
          {pick.error}
        </p>
      )}
    </Dialog>
  );
}
