import { useState } from 'react';
import type { TaskView } from '../../../main/api/contract.ts';
import { studio } from '../api.ts';
import { askToNotify, mayAskToNotify } from '../filmReady.ts';
import { useAction } from '../useLoad.ts';

const CANCEL_TITLE = 'Stops this render on your machine. Nothing paid is at stake: every image, clip and narration is kept, and rendering again buys nothing.';

/**
 * A render queued or under way: a bar with its percent and time left (from its own pace, see renderEta.ts), and a
 * Cancel that stops it. `what` names it for the bar ("the film", "Vertical 1080 × 1920 (MP4)").
 */
export function RenderProgress({ task, what, testId = 'render-progress' }: { task: TaskView; what: string; testId?: string }) {
  const cancel = useAction();
  const [asked, setAsked] = useState(false);
  const running = task.status === 'RUNNING';
  const percent = running && task.progress !== null ? Math.round(task.progress * 100) : null;
  return (
    <div className="render-progress" data-testid={testId}>
      {/* No value while it has no percent yet: the bar moves without claiming a share. */}
      <progress max={1} value={percent === null ? undefined : task.progress!} aria-label={`Rendering ${what}`} />
      <span className="render-figures">
        {!running ? <span title="The studio makes one render at a time; this one starts when the one before it ends">queued: one render at a time</span> : percent === null ? 'starting…' : <strong data-testid="render-percent">{percent}%</strong>}
        {running && task.eta && (
          <span className={`eta${task.eta.late ? ' late' : ''}`} data-testid="render-left">
            {' · '}
            {task.eta.text}
          </span>
        )}
      </span>
      <button disabled={cancel.busy} title={CANCEL_TITLE} onClick={() => void cancel.run(() => studio.cancel(task.id))}>
        Cancel render
      </button>
      {mayAskToNotify() && !asked && (
        <button
          title="Your system says when it is ready, even while you work in another window"
          onClick={() => {
            askToNotify();
            setAsked(true);
          }}
        >
          Tell me when it is ready
        </button>
      )}
      {cancel.error && (
        <p className="error" role="alert">
          {cancel.error}
        </p>
      )}
    </div>
  );
}
