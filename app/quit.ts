/** The parts of Electron's app the quit sequence uses, injected. */
export interface QuittingApp {
  on(event: 'before-quit', listener: (event: { preventDefault(): void }) => void): unknown;
  quit(): void;
  exit(code: number): void;
}

/**
 * Quitting waits for the engine to stop, so a request being sent finishes and its id is saved. Electron
 * reads preventDefault() synchronously and awaits nothing (Browser::HandleBeforeQuit in
 * shell/browser/browser.cc; electron/electron#27201), so the first before-quit is held, the stop awaited
 * with a limit, and the quit asked for again; that second one passes. A stop that overruns the limit is
 * left: every row it leaves is recoverable at the next start. `started` tells whether a quit has begun.
 */
export function wireQuit(app: QuittingApp, stop: () => Promise<void>, options: { limitMs: number; log: (m: string) => void }): { started(): boolean } {
  let state: 'running' | 'stopping' | 'stopped' = 'running';
  app.on('before-quit', (event) => {
    if (state === 'stopped') return;
    event.preventDefault();
    if (state === 'stopping') return;
    state = 'stopping';
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), options.limitMs)));
    void Promise.race([stop().then(() => 'stopped' as const), limit])
      .then(
        (how) => how === 'late' && options.log(`the engine did not stop within ${options.limitMs / 1000} s; quitting anyway, and the next start recovers what it left`),
        (err: unknown) => options.log(`the engine's stop failed (${(err as Error).message}); quitting anyway, and the next start recovers what it left`),
      )
      .finally(() => {
        clearTimeout(timer);
        state = 'stopped';
        app.quit();
      });
  });
  return { started: () => state !== 'running' };
}

/** The OS ending the session, which Electron's app quit events do not announce on Windows (docs/api/app.md). */
export interface SessionEvents {
  on(event: 'session-end', listener: () => void): unknown;
}
export interface ShutdownEvents {
  // Typed without its event in electron.d.ts, though the docs give it one with preventDefault().
  on(event: 'shutdown', listener: () => void): unknown;
}

/**
 * A logoff or shutdown runs the same quit: Windows announces it on the window ('session-end',
 * docs/api/browser-window.md), Linux and macOS through powerMonitor's 'shutdown', whose preventDefault
 * delays the shutdown while the app exits (docs/api/power-monitor.md).
 */
export function quitOnSessionEnd(window: SessionEvents, power: ShutdownEvents, app: { quit(): void }): void {
  window.on('session-end', () => app.quit());
  const onShutdown = (event?: { preventDefault(): void }) => {
    event?.preventDefault();
    app.quit();
  };
  power.on('shutdown', onShutdown as () => void);
}
