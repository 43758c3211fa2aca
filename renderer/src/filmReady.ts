import { useEffect, useRef } from 'react';
import type { ProjectSummary } from '../../main/api/contract.ts';
import { studio } from './api.ts';

/**
 * "Your film is ready", as the system shows it: the web Notification API, which a browser shows as its own and
 * Electron as the desktop's (app/permissions.ts lets the app's page use it). Permission is asked only from a
 * person's click (Generate, an export, or the button beside a running render), never when a page opens.
 */
const supported = () => typeof Notification !== 'undefined';

/** Whether a click could still be asked for permission: not decided yet. */
export const mayAskToNotify = () => supported() && Notification.permission === 'default';

/** Asks for permission to say when a film is ready, once; call it inside a click handler. */
export function askToNotify(): void {
  if (mayAskToNotify()) void Notification.requestPermission().catch(() => undefined);
}

const UNDER_WAY = new Set(['PENDING', 'RUNNING']);

/** A render this page saw unfinished, and where it belongs: its project, and for an export what it makes. */
interface Watched {
  project: string;
  export: string | null;
}

function announce(id: number, watched: Watched, onOpen: (project: string) => void): void {
  if (!supported() || Notification.permission !== 'granted') return;
  const body = watched.export ? `The export ${watched.export} is ready.` : 'The finished film is ready to watch.';
  // The tag makes it one notification even when two tabs of the studio both see the render end.
  const note = new Notification(watched.project, { body, tag: `studio-render-${id}` });
  note.onclick = () => {
    window.focus();
    onOpen(watched.project);
    note.close();
  };
}

/**
 * Says once when a render ends well: a render this page saw queued or running, seen finished. A render that was
 * finished already when the page opened (a reload, another tab) is never announced. Only projects with work under
 * way, or with a render being watched, are asked for their renders.
 */
export function useFilmReadyNotice(projects: readonly ProjectSummary[] | undefined, onOpen: (project: string) => void): void {
  const watched = useRef(new Map<number, Watched>());
  const open = useRef(onOpen);
  open.current = onOpen;
  // One look at a time; a change heard meanwhile is looked at once that one ends.
  const looking = useRef<{ busy: boolean; again: readonly ProjectSummary[] | null }>({ busy: false, again: null });

  useEffect(() => {
    // Nothing to say where the person said no, or where there is no way to say it.
    if (!projects || !supported() || Notification.permission === 'denied') return;
    const state = looking.current;
    if (state.busy) {
      state.again = projects;
      return;
    }
    const look = async (list: readonly ProjectSummary[]) => {
      const names = new Set([...watched.current.values()].map((w) => w.project));
      for (const p of list) {
        if (!names.has(p.name) && !(p.counts.PENDING || p.counts.RUNNING)) continue;
        const found = await studio.filmRenders(p.name).catch(() => null);
        if (!found) continue;
        for (const r of found.renders) {
          const seen = watched.current.get(r.id);
          if (UNDER_WAY.has(r.status)) {
            const made = r.preset ? (found.exports.find((e) => e.task.id === r.id)?.label ?? r.preset) : null;
            if (!seen) watched.current.set(r.id, { project: p.name, export: made });
          } else if (seen) {
            watched.current.delete(r.id);
            if (r.status === 'SUCCEEDED') announce(r.id, seen, open.current);
          }
        }
      }
    };
    const run = async (list: readonly ProjectSummary[]) => {
      state.busy = true;
      try {
        await look(list);
      } finally {
        state.busy = false;
        const next = state.again;
        state.again = null;
        if (next) void run(next);
      }
    };
    void run(projects);
  }, [projects]);
}
