import { useEffect, useRef, useState } from 'react';
import type { TaskView } from '../../../main/api/contract.ts';
import { mediaSrc, money, studio } from '../api.ts';
import { useAction } from '../useLoad.ts';

const ROW = 76;
const PAGE = 100;

function Preview({ task }: { task: TaskView }) {
  if (!task.outputUrl) return <div className="thumb" />;
  const src = mediaSrc(task.outputUrl);
  if (task.kind === 'image') return <img className="thumb" src={src} alt="" loading="lazy" />;
  if (task.kind === 'speech') return <audio src={src} controls preload="none" />;
  return <video className="thumb" src={src} controls preload="metadata" />;
}

function Row({ task }: { task: TaskView }) {
  const cancel = useAction();
  const active = task.status === 'PENDING' || task.status === 'RUNNING' || task.status === 'SUBMITTED';
  return (
    <div className={`task ${task.status.toLowerCase()}`} data-testid={`task-${task.id}`} data-status={task.status}>
      <Preview task={task} />
      <div className="what">
        <div>
          <span className="kind">{task.kind}</span> <span className="status">{task.status.replace('_', ' ').toLowerCase()}</span> · {task.provider} {task.model}
        </div>
        <div className="summary">{task.summary}</div>
        {(task.unknownReason || task.error || cancel.error) && <div className="error">{task.unknownReason ?? task.error ?? cancel.error}</div>}
        {task.note && <div className="note">{task.note}</div>}
        {task.outputs > 1 && <div className="summary">{task.outputs} files</div>}
        {active && <progress max={1} value={task.progress ?? undefined} />}
      </div>
      <div className="cost">
        {money(task.costActual ?? task.costEstimated, task.currency)}
        <small title={task.costActualSource ?? task.costEstimateSource ?? undefined} data-testid="cost-basis">
          {task.costActual !== null ? 'billed' : task.charged === 'maybe' ? 'possibly charged' : task.costEstimated !== null ? 'estimated' : 'price unknown'}
        </small>
        {active && (
          <button disabled={cancel.busy} onClick={() => void cancel.run(() => studio.cancel(task.id))}>
            Cancel
          </button>
        )}
      </div>
    </div>
  );
}

/** Every task of the project, newest first; only the rows in view are fetched and drawn, so thousands stay smooth. */
export function TaskBoard({ project, version }: { project: string; version: number }) {
  const [total, setTotal] = useState(0);
  const [pages, setPages] = useState(new Map<number, TaskView[]>());
  const [scroll, setScroll] = useState(0);
  const [height, setHeight] = useState(600);
  const [error, setError] = useState<string | null>(null);
  const box = useRef<HTMLDivElement>(null);

  const first = Math.max(0, Math.floor(scroll / ROW) - 5);
  const last = Math.min(total, Math.ceil((scroll + height) / ROW) + 5);
  const wanted = [...new Set([Math.floor(first / PAGE), Math.floor(Math.max(first, last - 1) / PAGE)])];

  useEffect(() => setPages(new Map()), [project, version]);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const resize = new ResizeObserver(() => setHeight(el.clientHeight));
    resize.observe(el);
    return () => resize.disconnect();
  }, []);
  useEffect(() => {
    let live = true;
    for (const page of wanted) {
      if (pages.has(page)) continue;
      studio.listTasks(project, page * PAGE, PAGE).then(
        (p) => {
          if (!live) return;
          setTotal(p.total);
          setPages((old) => new Map(old).set(page, p.tasks));
          setError(null);
        },
        (e: Error) => live && setError(e.message),
      );
    }
    return () => {
      live = false;
    };
  }, [project, pages, wanted.join(',')]);

  const rows: [number, TaskView][] = [];
  for (let i = first; i < last; i++) {
    const t = pages.get(Math.floor(i / PAGE))?.[i % PAGE];
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
              <Row task={t} />
            </div>
          ))}
        </div>
      </div>
    </section>
  );
}
