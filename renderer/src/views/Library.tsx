import { useEffect, useState } from 'react';
import type { Kind, LibraryItem } from '../../../main/api/contract.ts';
import { studio } from '../api.ts';
import { Dialog } from '../Dialog.tsx';
import { useAction, useLoad } from '../useLoad.ts';
import { amount, KIND_NOUN, OutputMedia, TaskDetailDialog } from './TaskDetail.tsx';
import { UseInScene } from './UseInScene.tsx';

const PAGE = 24;

interface Filters {
  project: string;
  kind: '' | Kind;
  provider: string;
  from: string;
  to: string;
  search: string;
}

const NONE: Filters = { project: '', kind: '', provider: '', from: '', to: '', search: '' };

/** A day picked in the page (the person's own time zone) as the instant it starts. */
const dayStart = (day: string, plus = 0) => {
  if (!day) return null;
  const d = new Date(`${day}T00:00:00`);
  d.setDate(d.getDate() + plus);
  return d.toISOString();
};

/** What deleting a result means for the money, in the words of the confirmation. */
export function deleteWarning(item: LibraryItem): string {
  const noun = KIND_NOUN[item.kind];
  const several = item.files.length > 1;
  const what = several ? `These ${item.files.length} ${noun}s` : `This ${noun}`;
  if (item.charged === 'no') return `${what} cost nothing (${item.costEstimateSource ?? 'made on this machine'}); deleting ${several ? 'them' : 'it'} removes the file${several ? 's' : ''}.`;
  const cost = item.costActual ?? item.costEstimated;
  return `${what} cost ${amount(cost, item.currency)} (${item.costBasis})${several ? ' together' : ''}; deleting ${several ? 'them' : 'it'} does not refund it.`;
}

function Card({ item, onOpen, onDelete, onUse }: { item: LibraryItem; onOpen: () => void; onDelete: () => void; onUse: () => void }) {
  const noun = KIND_NOUN[item.kind];
  const cost = item.costActual ?? item.costEstimated;
  return (
    <article className={`output ${item.deletedAt ? 'deleted' : ''}`} data-testid={`output-${item.id}`} aria-label={`${noun} of task ${item.id}`}>
      <div className="files">
        {item.files.map((f) => (
          <OutputMedia key={f.index} kind={item.kind} file={f} label={`${noun}: ${item.summary || `task ${item.id}`}`} />
        ))}
      </div>
      <div className="meta">
        <div>
          <span className="kind">{noun}</span> · {item.project}
          {item.scene && ` · scene ${item.scene}`}
        </div>
        <div className="prompt" title={item.summary}>
          {item.summary || '—'}
        </div>
        <div className="dim">
          {item.provider} {item.model}
          {item.remoteRequestId && (
            <>
              {' '}
              · request <code>{item.remoteRequestId}</code>
            </>
          )}
        </div>
        <div className="dim">
          {item.charged === 'no' ? 'no charge' : `${amount(cost, item.currency)} ${item.costBasis}`}
          {item.costActual !== null && item.costEstimated !== null && ` (estimated ${amount(item.costEstimated, item.currency)})`}
          {item.simulated && item.charged !== 'no' && ', simulated'} ·{' '}
          {item.finishedAt && new Date(item.finishedAt).toLocaleString()}
        </div>
        {item.deletedAt && <div className="note">deleted {new Date(item.deletedAt).toLocaleDateString()}; still counted in the spend</div>}
      </div>
      <div className="row">
        <button onClick={onOpen} aria-label={`Details of task ${item.id}`}>
          Details
        </button>
        {!item.deletedAt && (item.kind === 'image' || item.kind === 'clip') && (
          <button onClick={onUse} aria-label={`Use the ${noun} of task ${item.id} in a scene`}>
            Use in scene…
          </button>
        )}
        {!item.deletedAt && (
          <button onClick={onDelete} aria-label={`Delete the ${noun} of task ${item.id}`}>
            Delete…
          </button>
        )}
      </div>
    </article>
  );
}

function DeleteConfirm({ item, onClose, onDeleted }: { item: LibraryItem; onClose: () => void; onDeleted: () => void }) {
  const del = useAction();
  return (
    <Dialog title={`Delete the ${KIND_NOUN[item.kind]} of task ${item.id}?`} onClose={onClose} closeButton={false} className="confirm" testId="delete-confirm">
      <p data-testid="delete-warning">{deleteWarning(item)}</p>
      <p className="note">
        The studio keeps its record: what was sent, what it cost, its history. A Generate that needs it again says it was paid for and
        lost, and buys it again only if you confirm.
      </p>
      {del.error && <p className="error" role="alert">{del.error}</p>}
      <div className="row">
        <button
          className="primary danger"
          disabled={del.busy}
          onClick={() =>
            void del.run(async () => {
              await studio.deleteOutput(item.id);
              onDeleted();
            })
          }
        >
          Delete
        </button>
        <button data-autofocus onClick={onClose}>
          Keep it
        </button>
      </div>
    </Dialog>
  );
}

/** Every result the studio has saved, across projects, newest first, a page at a time. */
export function Library({ version }: { version: number }) {
  const [filters, setFilters] = useState<Filters>(NONE);
  const [search, setSearch] = useState('');
  const [offset, setOffset] = useState(0);
  const [open, setOpen] = useState<number | null>(null);
  const [deleting, setDeleting] = useState<LibraryItem | null>(null);
  const [using, setUsing] = useState<LibraryItem | null>(null);
  const [used, setUsed] = useState<string | null>(null);
  // The search is sent once typing pauses, not at every key.
  useEffect(() => {
    const timer = setTimeout(() => setFilters((f) => (f.search === search ? f : { ...f, search })), 250);
    return () => clearTimeout(timer);
  }, [search]);
  useEffect(() => setOffset(0), [filters]);
  const page = useLoad(
    () =>
      studio.library({
        project: filters.project || null,
        kind: filters.kind || null,
        provider: filters.provider || null,
        from: dayStart(filters.from),
        to: dayStart(filters.to, 1),
        search: filters.search || null,
        offset,
        limit: PAGE,
      }),
    [version, filters, offset],
  );
  const p = page.data;
  const set = (key: keyof Filters) => (e: { target: { value: string } }) => setFilters((f) => ({ ...f, [key]: e.target.value }));
  return (
    <section className="library" aria-labelledby="library-title">
      <h2 id="library-title">
        Library <small data-testid="library-count">{p ? `${p.total} result${p.total === 1 ? '' : 's'}` : ''}</small>
      </h2>
      <div className="filters row" role="search">
        <label>
          Project
          <select value={filters.project} onChange={set('project')} aria-label="Project">
            <option value="">All projects</option>
            {p?.projects.map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </label>
        <label>
          Kind
          <select value={filters.kind} onChange={set('kind')} aria-label="Kind">
            <option value="">All kinds</option>
            {(Object.keys(KIND_NOUN) as Kind[]).map((k) => (
              <option key={k} value={k}>
                {KIND_NOUN[k]}
              </option>
            ))}
          </select>
        </label>
        <label>
          Provider
          <select value={filters.provider} onChange={set('provider')} aria-label="Provider">
            <option value="">All providers</option>
            {p?.providers.map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </label>
        <label>
          From
          <input type="date" value={filters.from} onChange={set('from')} aria-label="From" />
        </label>
        <label>
          To
          <input type="date" value={filters.to} onChange={set('to')} aria-label="To" />
        </label>
        <label className="grow">
          Search prompts
          <input type="search" value={search} onChange={(e) => setSearch(e.target.value)} placeholder="words of a prompt or narration" aria-label="Search prompts" />
        </label>
        {(filters !== NONE || search) && (
          <button
            onClick={() => {
              setSearch('');
              setFilters(NONE);
            }}
          >
            Clear filters
          </button>
        )}
      </div>
      {page.error && <p className="error">{page.error}</p>}
      {used && (
        <p className="note" role="status" data-testid="used-in-scene">
          {used}
        </p>
      )}
      {p?.total === 0 && <p className="empty">No saved result matches.</p>}
      <div className="outputs" data-testid="library-list">
        {p?.items.map((item) => (
          <Card key={item.id} item={item} onOpen={() => setOpen(item.id)} onDelete={() => setDeleting(item)} onUse={() => setUsing(item)} />
        ))}
      </div>
      {p && p.total > PAGE && (
        <nav className="pager row" aria-label="Library pages">
          <button disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
            Newer
          </button>
          <span>
            {offset + 1}–{Math.min(p.total, offset + PAGE)} of {p.total}
          </span>
          <button disabled={offset + PAGE >= p.total} onClick={() => setOffset(offset + PAGE)}>
            Older
          </button>
        </nav>
      )}
      {open !== null && <TaskDetailDialog taskId={open} version={version} onClose={() => setOpen(null)} />}
      {using && (
        <UseInScene
          item={using}
          onClose={() => setUsing(null)}
          onUsed={(words) => {
            setUsing(null);
            setUsed(words);
          }}
        />
      )}
      {deleting && (
        <DeleteConfirm
          item={deleting}
          onClose={() => setDeleting(null)}
          onDeleted={() => {
            setDeleting(null);
            page.reload();
          }}
        />
      )}
    </section>
  );
}
