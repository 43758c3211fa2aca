/**
 * A run that never overlaps itself: a call while one is under way queues one more run after it, and every call
 * made meanwhile shares that one. For timers whose work awaits the database, which may take longer than the timer.
 */
export function coalesced(run: () => Promise<void>): { (): Promise<void>; idle(): Promise<void> } {
  let current: Promise<void> | null = null;
  let next: Promise<void> | null = null;
  const start = (): Promise<void> => {
    current = run().finally(() => {
      current = null;
    });
    return current;
  };
  const again = (): Promise<void> => {
    next = null;
    return start();
  };
  const call = (): Promise<void> => {
    if (!current) return start();
    next ??= current.then(again, again);
    return next;
  };
  return Object.assign(call, {
    /** Settles once no run is under way or queued. */
    idle: async (): Promise<void> => {
      while (current || next) await (next ?? current)!.catch(() => undefined);
    },
  });
}
