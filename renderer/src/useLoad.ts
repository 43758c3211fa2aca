import { useCallback, useEffect, useRef, useState } from 'react';

interface Loaded<T> {
  /** Whose data this is, so nothing of one project is ever shown as another's. */
  scope: string;
  data?: T;
  error: string | null;
}

/**
 * Loads data again whenever `deps` change (a project, a change version); errors stay where they happened.
 * `scope` names whose data it is (a project): while another scope loads, and when it fails, nothing loaded
 * for an earlier scope is returned. Within a scope the last data stays on screen while a reload runs.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], scope = ''): { data: T | undefined; error: string | null; reload: () => void } {
  const [loaded, setLoaded] = useState<Loaded<T>>({ scope, error: null });
  const [tick, setTick] = useState(0);
  // Loads asked for and shown, in order: a load that a change overtook is still shown if nothing newer is yet
  // (a page opening is followed at once by the first change, which would otherwise throw its first answer away).
  const order = useRef({ asked: 0, shown: 0, scope });
  order.current.scope = scope;
  useEffect(() => {
    let live = true;
    const n = ++order.current.asked;
    load().then(
      (data) => {
        const o = order.current;
        if (!live && (o.scope !== scope || n < o.shown)) return;
        o.shown = n;
        setLoaded({ scope, data, error: null });
      },
      (e: Error) => live && setLoaded((was) => ({ scope, data: was.scope === scope ? was.data : undefined, error: e.message })),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, scope, tick]);
  const mine = loaded.scope === scope;
  return { data: mine ? loaded.data : undefined, error: mine ? loaded.error : null, reload: useCallback(() => setTick((t) => t + 1), []) };
}

/** Runs an action, keeping its error next to the button that started it. */
export function useAction(): { busy: boolean; error: string | null; run: (fn: () => Promise<unknown>) => Promise<void> } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(async (fn: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run };
}
