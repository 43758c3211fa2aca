import { useEffect, useRef, useState } from 'react';
import type { CancelPreview, TaskView } from '../../../main/api/contract.ts';
import { mediaSrc, money, studio } from '../api.ts';
import { Dialog } from '../Dialog.tsx';
import { useAction } from '../useLoad.ts';
import { KIND_NOUN, TaskDetailDialog } from './TaskDetail.tsx';
import { ShapedVideo } from './videoShape.tsx';

const ROW = 76;
const PAGE = 100;

function Preview({ task }: { task: TaskView }) {
  if (!task.outputUrl) return <div className="thumb" />;
  const src = mediaSrc(task.outputUrl);
  if (task.kind === 'image') return <img className="thumb" src={src} alt="" loading="lazy" />;
  if (task.kind === 'speech') return <audio src={src} controls preload="none" />;
  return <ShapedVideo className="thumb" src={src} />;
}

/** Whether two answers to "what would a cancel mean" say the same about money and the steps it takes along. */
const sameRisk = (a: CancelPreview, b: CancelPreview) =>
  a.sent === b.sent && a.message === b.message && a.dependents.map((d) => d.id).join() === b.dependents.map((d) => d.id).join();

/** Cancelling asks first: what was already sent and may be charged, and which steps are cancelled with it. */
function CancelConfirm({ task, preview: first, version, onClose }: { task: TaskView; preview: CancelPreview; version: number; onClose: () => void }) {
  const cancel = useAction();
  const [preview, setPreview] = useState(first);
  const [changed, setChanged] = useState(false);
  const shown = useRef(first);
  // A step may be sent while the person reads (one waiting on another is sent once that is made): what they
  // confirm is what the studio says now, so a change is shown and asked about again instead of acted on.
  const show = (now: CancelPreview): boolean => {
    if (sameRisk(shown.current, now)) return false;
    shown.current = now;
    setPreview(now);
    setChanged(true);
    return true;
  };
  useEffect(() => {
    let live = true;
    studio.cancelPreview(task.id).then(
      (now) => live && show(now),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [task.id, version]);
  return (
    <Dialog title={`Cancel task ${task.id} (${KIND_NOUN[task.kind]})?`} onClose={onClose} closeButton={false} className="confirm" testId="cancel-confirm">
      {changed && (
        <p className="warning" role="alert" data-testid="cancel-changed">
          This changed while the question was open: read it again.
        </p>
      )}
      <p data-testid="cancel-message">{preview.message}</p>
      {preview.dependents.length > 0 ? (
        <>
          <p>These steps need it and will be cancelled too:</p>
          <ul data-testid="cancel-dependents">
            {preview.dependents.map((d) => (
              <li key={d.id}>
                {KIND_NOUN[d.kind]} (task {d.id}){d.summary && `: ${d.summary}`}
              </li>
            ))}
          </ul>
        </>
      ) : (
        <p className="note">No other step waits for it.</p>
      )}
      {cancel.error && <p className="error" role="alert">{cancel.error}</p>}
      <div className="row">
        <button
          className="primary"
          disabled={cancel.busy}
          onClick={() =>
            void cancel.run(async () => {
              if (show(await studio.cancelPreview(task.id))) return;
              await studio.cancel(task.id);
              onClose();
            })
          }
        >
          Cancel the task
        </button>
        <button data-autofocus onClick={onClose}>
          Keep it
        </button>
      </div>
    </Dialog>
  );
}

function Row({ task, onOpen, onCancel }: { task: TaskView; onOpen: (id: number) => void; onCancel: (task: TaskView, preview: CancelPreview) => void }) {
  const cancel = useAction();
  const active = task.status === 'PENDING' || task.status === 'RUNNING' || task.status === 'SUBMITTED';
  return (
    <div
      className={`task ${task.status.toLowerCase()}`}
      data-testid={`task-${task.id}`}
      data-status={task.status}
      // A click anywhere on the row opens it, except on its own controls; the Details button does it by keyboard.
      onClick={(e) => !(e.target as HTMLElement).closest('button, audio, video, a') && onOpen(task.id)}
    >
      <Preview task={task} />
      <div className="what">
        <div>
          <span className="kind">{task.kind}</span> <span className="status">{task.status.replace('_', ' ').toLowerCase()}</span> · {task.provider} {task.model}
        </div>
        <div className="summary">{task.summary}</div>
        {(task.unknownReason || task.error || cancel.error) && <div className="error">{task.unknownReason ?? task.error ?? cancel.error}</div>}
        {task.note && <div className="note">{task.note}</div>}
        {task.outputs > 1 && <div className="summary">{task.outputs} files</div>}
        {active &&
          (task.waitingFor.length > 0 ? (
            <div className="waiting-for" data-testid="waiting-for">
              waiting for: {task.waitingFor.join(', ')}
            </div>
          ) : (
            <>
              <progress max={1} value={task.progress ?? undefined} aria-label={`task ${task.id} progress`} />
              {task.eta && (
                <span className={`eta${task.eta.late ? ' late' : ''}`} data-testid="eta" title={task.eta.expectedAt ? `expected by ${new Date(task.eta.expectedAt).toLocaleTimeString()}` : undefined}>
                  {' '}
                  {task.eta.text}
                </span>
              )}
            </>
          ))}
      </div>
      <div className="cost">
        {money(task.costActual ?? task.costEstimated, task.currency)}
        <small title={task.costActualSource ?? task.costEstimateSource ?? undefined} data-testid="cost-basis">
          {task.costBasis}
        </small>
        {task.simulated && <small className="simulated"> simulated</small>}
        <div className="row">
          <button onClick={() => onOpen(task.id)} aria-label={`Details of task ${task.id}`}>
            Details
          </button>
          {active && (
            <button disabled={cancel.busy} onClick={() => void cancel.run(async () => onCancel(task, await studio.cancelPreview(task.id)))}>
              Cancel
            </button>
          )}
        </div>
      </div>
    </div>
  );
}

/** Every task of the project, newest first; only the rows in view are fetched and drawn, so thousands stay smooth. */
export function TaskBoard({ project, version }: { project: string; version: number }) {
  const [total, setTotal] = useState(0);
  // Each page with the change version it was read at: a change reads again the pages in view, and shows the
  // rows it had until the new ones come, so the board never empties while the engine works.
  const [pages, setPages] = useState(new Map<number, { version: number; tasks: TaskView[] }>());
  // Pages being read, with the version asked for, so a page is not asked for twice at once.
  const asked = useRef(new Map<number, number>());
  const [scroll, setScroll] = useState(0);
  const [height, setHeight] = useState(600);
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState<number | null>(null);
  // Kept here, not in the row: a row is drawn again (or not at all) as the list reloads and scrolls.
  const [cancelling, setCancelling] = useState<{ task: TaskView; preview: CancelPreview } | null>(null);
  const box = useRef<HTMLDivElement>(null);

  const first = Math.max(0, Math.floor(scroll / ROW) - 5);
  const last = Math.min(total, Math.ceil((scroll + height) / ROW) + 5);
  const wanted = [...new Set([Math.floor(first / PAGE), Math.floor(Math.max(first, last - 1) / PAGE)])];
  const inView = useRef(wanted);
  inView.current = wanted;

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const resize = new ResizeObserver(() => setHeight(el.clientHeight));
    resize.observe(el);
    return () => resize.disconnect();
  }, []);
  const mounted = useRef(true);
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);
  useEffect(() => {
    for (const page of wanted) {
      if (pages.get(page)?.version === version || asked.current.get(page) === version) continue;
      asked.current.set(page, version);
      studio.listTasks(project, page * PAGE, PAGE).then(
        (p) => {
          if (asked.current.get(page) === version) asked.current.delete(page);
          if (!mounted.current) return;
          setTotal(p.total);
          // Pages far from view are let go of, so scrolling through 100,000 tasks keeps a few pages in memory.
          const near = (k: number) => inView.current.some((w) => Math.abs(k - w) <= 2);
          setPages((old) => {
            if ((old.get(page)?.version ?? -1) > version) return old;
            const kept = new Map([...old].filter(([k]) => near(k)));
            return near(page) ? kept.set(page, { version, tasks: p.tasks }) : kept;
          });
          setError(null);
        },
        (e: Error) => {
          if (asked.current.get(page) === version) asked.current.delete(page);
          if (mounted.current) setError(e.message);
        },
      );
    }
  }, [project, version, pages, wanted.join(',')]);

  const rows: [number, TaskView][] = [];
  for (let i = first; i < last; i++) {
    const t = pages.get(Math.floor(i / PAGE))?.tasks[i % PAGE];
    if (t) rows.push([i, t]);
  }
  return (
    <section className="board">
      <h2>
        Tasks <small data-testid="task-count">{total}</small>
      </h2>
      {error && <p className="error">{error}</p>}
      <div className="list" ref={box} onScroll={(e) => setScroll(e.currentTarget.scrollTop)} data-testid="task-list">
        <div style={{ height: total * ROW, position: 'relative' }}>
          {rows.map(([i, t]) => (
            <div key={t.id} style={{ position: 'absolute', top: i * ROW, left: 0, right: 0, height: ROW }}>
              <Row task={t} onOpen={setOpen} onCancel={(task, preview) => setCancelling({ task, preview })} />
            </div>
          ))}
        </div>
      </div>
      {cancelling && <CancelConfirm task={cancelling.task} preview={cancelling.preview} version={version} onClose={() => setCancelling(null)} />}
      {open !== null && <TaskDetailDialog taskId={open} version={version} onClose={() => setOpen(null)} />}
    </section>
  );
}
