import { useState, type ReactNode } from 'react';
import type { CandidateView, UnknownTask } from '../../../main/api/contract.ts';
import { money, studio } from '../api.ts';
import { Dialog } from '../Dialog.tsx';
import { useAction, useLoad } from '../useLoad.ts';

/** A decision waiting for its confirmation: the question, what it risks when more must be said, and its button's name. */
type Pending = { label: string; detail?: ReactNode; yes?: string; act: () => Promise<unknown> } | null;

/** A time in the person's own zone: the hour alone when it is today, else with its date. */
function localTime(at: string): string {
  const when = new Date(at);
  const today = when.toDateString() === new Date().toDateString();
  return today ? when.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : when.toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' });
}

function Unknown({ task, onDone }: { task: UnknownTask; onDone: () => void }) {
  const [candidates, setCandidates] = useState<CandidateView[] | null>(null);
  const [confirm, setConfirm] = useState<Pending>(null);
  const action = useAction();
  const decide = (label: string, act: () => Promise<unknown>) => setConfirm({ label, act });
  const until = task.mayRunUntil && <time dateTime={task.mayRunUntil.at}>{localTime(task.mayRunUntil.at)}</time>;
  const resubmit = () =>
    task.mayRunUntil
      ? setConfirm({
          label: `Send it again, although it may still be running at ${task.provider}?`,
          detail: (
            <p>
              {task.provider} lists a request once it has ended, and this one could still be queued or running there until {until}. If it
              is, {task.provider} charges for it and for the new one: you may pay twice for this step. To be sure, look for it again after{' '}
              {until}.
            </p>
          ),
          yes: 'Send it again anyway',
          act: () => studio.resolve(task.id, { resubmit: true, evenIfRunning: true }),
        })
      : decide('Send it again? You may pay twice for this step.', () => studio.resolve(task.id, { resubmit: true }));

  return (
    <article className="unknown" data-testid={`unknown-${task.id}`}>
      <h3>
        {task.kind} for {task.project} · {task.provider} {task.model}
      </h3>
      <p>
        <strong>Sent:</strong> {task.submitStartedAt ? new Date(task.submitStartedAt).toLocaleString() : 'unknown time'} — “{task.summary}”
      </p>
      <p>
        <strong>Why nobody knows the outcome:</strong> {task.unknownReason}
      </p>
      {task.mayRunUntil && (
        <div data-testid="may-run-until">
          <p>
            <strong>Could still be running:</strong> {task.provider} lists a request once it has ended; this one could still be queued
            or running until {until}.
          </p>
          <details>
            <summary>Why until then</summary>
            <p>{task.mayRunUntil.why}</p>
          </details>
        </div>
      )}
      {task.lookup && (
        <p>
          <strong>The studio's own lookup:</strong> {task.lookup}
        </p>
      )}
      <p>
        <strong>May have cost:</strong> {money(task.costEstimated, task.currency)} {task.costEstimateSource && <small>({task.costEstimateSource})</small>}
      </p>
      <details>
        <summary>What was sent, and its history</summary>
        <pre>{JSON.stringify(task.input, null, 2)}</pre>
        <ul>
          {task.events.map((e, i) => (
            <li key={i}>
              {new Date(e.at).toLocaleTimeString()} {e.to} — {e.reason} ({e.actor})
            </li>
          ))}
        </ul>
      </details>
      <div className="row">
        <button onClick={() => void action.run(async () => setCandidates(await studio.reconcile(task.id)))}>Look for it at {task.provider}</button>
        <button onClick={resubmit}>Resubmit</button>
        <button onClick={() => decide('Give up on it? It stays counted as possibly charged.', () => studio.resolve(task.id, { giveUp: true }))}>Give up</button>
      </div>
      {candidates && task.lookupLists && <p className="note">What the lookup sees: {task.lookupLists}.</p>}
      {candidates &&
        (candidates.length === 0 ? (
          <p className="note">{task.provider} has no request like this one: it was most likely never accepted.</p>
        ) : (
          <ul className="candidates">
            {candidates.map((c) => (
              <li key={c.requestId}>
                <code>{c.requestId}</code> {new Date(c.createdAt).toLocaleString()} {c.status} — {c.why}{' '}
                <button onClick={() => decide(`Adopt request ${c.requestId}? Its result will be collected, not bought again.`, () => studio.resolve(task.id, { adopt: c.requestId }))}>Adopt</button>
              </li>
            ))}
          </ul>
        ))}
      {confirm && (
        <Dialog title={confirm.label} onClose={() => setConfirm(null)} closeButton={false} className="confirm">
          {confirm.detail}
          <button
            className="primary"
            onClick={() => {
              // Closed either way: a refusal (a request that belongs to another task) shows below, beside the decision,
              // and the list is read again, as the task may have changed (a request that could now still be running).
              setConfirm(null);
              void action.run(async () => {
                try {
                  await confirm.act();
                } finally {
                  onDone();
                }
              });
            }}
          >
            {confirm.yes ?? 'Confirm'}
          </button>
          <button onClick={() => setConfirm(null)} data-autofocus>
            Cancel
          </button>
        </Dialog>
      )}
      {action.error && <p className="error" role="alert">{action.error}</p>}
    </article>
  );
}

/** Every task whose outcome nobody can know, with the three decisions, each confirmed. */
export function Decisions({ version, onClose }: { version: number; onClose: () => void }) {
  const list = useLoad(() => studio.unknownTasks(), [version]);
  return (
    <Dialog title="Needs your decision" onClose={onClose}>
      <p className="note">
        These requests may have reached the provider, and may have been charged, but the studio cannot know. It will not
        retry them on its own. Look for each at its provider, then adopt what you find, send it again, or give up.
      </p>
      {list.error && <p className="error">{list.error}</p>}
      {list.data?.length === 0 && <p>Nothing is waiting for you.</p>}
      {list.data?.map((t) => <Unknown key={t.id} task={t} onDone={list.reload} />)}
    </Dialog>
  );
}
