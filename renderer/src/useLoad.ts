import { useCallback, useEffect, useState } from 'react';

/** Loads data when `key` changes (a project, a change version); errors stay where they happened. */
export function useLoad<T>(load: () => Promise<T>, key: unknown[]): { data: T | undefined; error: string | null; reload: () => void } {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    load().then(
      (d) => live && (setData(d), setError(null)),
      (e: Error) => live && setError(e.message),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...key, tick]);
  return { data, error, reload: useCallback(() => setTick((t) => t + 1), []) };
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
