import type { Kind, OutputFileView, TaskDetail, TaskView } from '../../../main/api/contract.ts';
import { mediaSrc, money, studio } from '../api.ts';
import { Dialog } from '../Dialog.tsx';
import { useLoad } from '../useLoad.ts';
import { ShapedVideo } from './videoShape.tsx';

export const KIND_NOUN: Record<Kind, string> = { image: 'image', clip: 'clip', speech: 'narration', render: 'video', draft: 'storyboard draft' };

/** An amount in the one way money is shown (see main/domain/money.ts), or "price unknown". */
export const amount = (value: number | null, currency: string) => (value === null ? 'price unknown' : money(value, currency));

/** What the task's figure is called beside it: the API decides its basis (domain/costBasis.ts), the app only shows it. */
export const actualLabel = (t: Pick<TaskView, 'costBasis'>) => (t.costBasis === 'counted from usage' ? 'Counted from usage' : 'Billed');

/** One file of a result: a picture, a playable clip, or audio with its controls. */
export function OutputMedia({ kind, file, label, large }: { kind: Kind; file: OutputFileView; label: string; large?: boolean }) {
  if (!file.url) return <div className={`thumb gone ${large ? 'large' : ''}`}>deleted</div>;
  // Saved, but not readable on this machine: the detail says which machine has it; a card, in its title.
  if (file.problem) {
    return (
      <div className={`thumb gone ${large ? 'large' : ''}`} role="note" title={file.problem} data-testid="output-problem">
        {large ? file.problem : file.problem.includes('checksum') ? 'changed since it was saved' : 'not on this machine'}
      </div>
    );
  }
  const src = mediaSrc(file.url);
  const cls = `thumb ${large ? 'large' : ''}`;
  if (kind === 'image') return <img className={cls} src={src} alt={label} loading="lazy" />;
  if (kind === 'speech') return <audio src={src} controls preload="none" aria-label={label} />;
  if (kind === 'draft') return <a className={cls} href={src} target="_blank" rel="noreferrer">the draft, as JSON</a>;
  return <ShapedVideo className={cls} src={src} label={label} />;
}

function Detail({ d }: { d: TaskDetail }) {
  const noun = KIND_NOUN[d.kind];
  return (
    <div className="task-detail">
      <section aria-label="Output">
        <h3>Output</h3>
        {d.files.length === 0 ? (
          <p className="note">No output{d.status === 'SUCCEEDED' ? '' : ` (${d.status.replace('_', ' ').toLowerCase()})`}.</p>
        ) : (
          <div className="files">
            {d.files.map((f) => (
              <OutputMedia key={f.index} kind={d.kind} file={f} label={`${noun} ${f.index + 1} of task ${d.id}`} large />
            ))}
          </div>
        )}
        {d.files.some((f) => f.machine) && (
          <p className="dim" data-testid="detail-machine">
            Saved by {[...new Set(d.files.map((f) => f.machine ?? 'an unrecorded machine'))].join(', ')}.
          </p>
        )}
        {d.deletedAt && <p className="note">You deleted its files on {new Date(d.deletedAt).toLocaleString()}; what it cost stays counted.</p>}
      </section>
      <section aria-label="Money">
        <h3>Money</h3>
        {d.simulated && (
          <p className="simulated" data-testid="detail-simulated">
            Simulated: these are the simulator's made-up prices, never charged and not counted as real money.
          </p>
        )}
        <dl className="facts" data-testid="detail-money">
          <dt>Estimated</dt>
          <dd>
            {amount(d.costEstimated, d.currency)} <small>{d.costEstimateSource ?? 'no estimate'}</small>
          </dd>
          <dt>{actualLabel(d)}</dt>
          <dd data-testid="detail-actual">
            {d.costActual === null ? 'no bill from the provider' : amount(d.costActual, d.currency)} {d.costActualSource && <small>{d.costActualSource}</small>}
            {d.costBasis === 'counted from usage' && (
              <small className="note" data-testid="detail-counted">
                {' '}
                The provider reported what it bills by, not the money: the studio counted this at the catalogue's price, so the bill may differ.
              </small>
            )}
          </dd>
          <dt>Basis</dt>
          <dd data-testid="detail-basis">{d.costBasis}</dd>
          <dt>Charged</dt>
          <dd>{d.charged === 'yes' ? 'yes: the provider accepted it' : d.charged === 'maybe' ? 'possibly: nobody knows whether the provider took it' : 'no'}</dd>
        </dl>
      </section>
      <section aria-label="Request">
        <h3>Request</h3>
        <dl className="facts">
          <dt>Project</dt>
          <dd>
            {d.project}
            {d.scene && ` · scene ${d.scene}`}
          </dd>
          <dt>Provider</dt>
          <dd>
            {d.provider} {d.model}
          </dd>
          <dt>Request id</dt>
          <dd data-testid="detail-request-id">{d.remoteRequestId ? <code>{d.remoteRequestId}</code> : 'none: the provider never named one'}</dd>
          <dt>Status</dt>
          <dd>{d.status.replace('_', ' ').toLowerCase()}</dd>
          {d.error && (
            <>
              <dt>Error</dt>
              <dd className="error">{d.error}</dd>
            </>
          )}
        </dl>
        {(d.dependsOn.length > 0 || d.dependents.length > 0) && (
          <p className="note">
            {d.dependsOn.length > 0 && `Made from ${d.dependsOn.map((t) => `${KIND_NOUN[t.kind]} (task ${t.id})`).join(', ')}. `}
            {d.dependents.length > 0 && `Used by ${d.dependents.map((t) => `${KIND_NOUN[t.kind]} (task ${t.id})`).join(', ')}.`}
          </p>
        )}
        <h3>What was sent</h3>
        <pre tabIndex={0} aria-label="What was sent">{JSON.stringify(d.input, null, 2)}</pre>
      </section>
      <section aria-label="History">
        <h3>History</h3>
        <table className="history" data-testid="detail-history">
          <thead>
            <tr>
              <th>When</th>
              <th>Change</th>
              <th>By</th>
              <th>Why</th>
            </tr>
          </thead>
          <tbody>
            {d.events.map((e, i) => (
              <tr key={i}>
                <td>{new Date(e.at).toLocaleString()}</td>
                <td>
                  {e.from ? `${e.from.toLowerCase()} → ` : ''}
                  {e.to.toLowerCase()}
                </td>
                <td>{e.actor === 'person' ? 'you' : 'the studio'}</td>
                <td>{e.reason}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </div>
  );
}

/** A task's history, what was sent, its request id, its money figures with their sources, and its output. */
export function TaskDetailDialog({ taskId, version, onClose }: { taskId: number; version: number; onClose: () => void }) {
  const detail = useLoad(() => studio.taskDetail(taskId), [version], String(taskId));
  const d = detail.data;
  return (
    <Dialog title={d ? `Task ${d.id}: ${KIND_NOUN[d.kind]} · ${d.project}` : `Task ${taskId}`} onClose={onClose} testId="task-detail" className="wide">
      {detail.error && <p className="error">{detail.error}</p>}
      {d ? <Detail d={d} /> : !detail.error && <p className="note">Loading…</p>}
    </Dialog>
  );
}
