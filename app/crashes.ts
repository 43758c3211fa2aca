import type { BaseWindow, CrashReporter, Dialog, MessageBoxOptions, RenderProcessGoneDetails } from 'electron';
import type { Logger } from '../main/logging/logger.ts';
import { APP_NAME } from './identity.ts';

/**
 * What the desktop app does when a part of it fails: crash dumps kept on this machine, a window whose page died
 * loaded again (and the person told), an error nothing caught in the main process logged and shown once. The
 * engine keeps running through a page's crash, so a paid request in flight keeps its id and is not sent again.
 */

/** A page that dies more often than this within the minute is not loaded again: something in it keeps failing. */
export const RELOADS_PER_MINUTE = 3;
const MINUTE = 60_000;

export type PageGoneAction = 'ignore' | 'reload' | 'give up';

/**
 * What to do when the window's page process is gone, from its reason and when the page died before. A 'clean-exit'
 * (exit code 0, docs/api/structures/render-process-gone-details.md) is no crash: it is left alone. Otherwise the
 * page is loaded again, up to RELOADS_PER_MINUTE times in a minute.
 */
export function pageGoneAction(reason: RenderProcessGoneDetails['reason'], earlier: readonly number[], now: number): { action: PageGoneAction; deaths: number[] } {
  if (reason === 'clean-exit') return { action: 'ignore', deaths: [...earlier] };
  const deaths = [...earlier.filter((at) => now - at < MINUTE), now];
  return { action: deaths.length > RELOADS_PER_MINUTE ? 'give up' : 'reload', deaths };
}

/**
 * Starts Electron's crash reporter for local dumps only: with uploadToServer false no submitURL is needed
 * (docs/api/crash-reporter.md, "Required unless uploadToServer is false") and nothing leaves the machine; the dumps
 * stay in app.getPath('crashDumps'), named in "Copy diagnostics". Called before the app is ready, so every process
 * it starts is watched (ibid.: "as early as possible in app startup, preferably before app.on('ready')").
 */
export function startCrashReporter(reporter: Pick<CrashReporter, 'start'>): void {
  reporter.start({ uploadToServer: false });
}

/** The window's web contents as far as a dead page is watched and loaded again. */
export interface PageContents {
  on(event: 'render-process-gone', listener: (event: unknown, details: RenderProcessGoneDetails) => void): unknown;
  once(event: 'did-finish-load', listener: () => void): unknown;
  reload(): void;
}

export interface PageWatch {
  log: Logger;
  dialog: { showMessageBox(window: BaseWindow, options: MessageBoxOptions): Promise<unknown>; showErrorBox: Dialog['showErrorBox'] };
  /** The window whose page it is: the note is shown on it. */
  window: BaseWindow;
  /** Quits as the app does (waiting for paid work in flight, app/quit.ts). */
  quit(): void;
  /** Whether a quit has begun: a page that dies then is not loaded again, nor a box shown over a quitting app. */
  quitting(): boolean;
  now?: () => number;
}

/**
 * Loads the window's page again when its process dies ('render-process-gone', docs/api/web-contents.md), and once
 * it has loaded tells the person what happened. A page that keeps dying is given up: the person is told where the
 * logs are, and the app quits as usual.
 */
export function watchPage(contents: PageContents, watch: PageWatch): void {
  let deaths: number[] = [];
  const now = watch.now ?? Date.now;
  contents.on('render-process-gone', (_event, details) => {
    const decided = pageGoneAction(details.reason, deaths, now());
    deaths = decided.deaths;
    if (decided.action === 'ignore') return;
    const what = `the window's page stopped (${details.reason}, exit code ${details.exitCode})`;
    if (watch.quitting()) return void watch.log.error(`${what} as the app quits; not loading it again`);
    if (decided.action === 'give up') {
      watch.log.error(`${what}, the ${deaths.length}th time within a minute; not loading it again`);
      watch.dialog.showErrorBox(
        `${APP_NAME} keeps failing to show its window`,
        `Its page stopped ${deaths.length} times within a minute, so ${APP_NAME} will quit once any paid request in flight has finished; nothing you paid for is lost. ` +
          `Start it again. If it happens again, send the logs${watch.log.dir ? ` in ${watch.log.dir}` : ''}.`,
      );
      watch.quit();
      return;
    }
    watch.log.error(`${what}; loading it again`);
    contents.once('did-finish-load', () => {
      // A quit that began during the reload: no box over the quitting app.
      if (watch.quitting()) return;
      void watch.dialog
        .showMessageBox(watch.window, {
          type: 'warning',
          title: APP_NAME,
          message: `${APP_NAME}'s window stopped and was opened again`,
          detail:
            'Its page stopped unexpectedly. The studio itself kept running, so paid requests in flight go on and nothing is bought twice. ' +
            'If this happens again, use Copy diagnostics in Settings and send the text.',
        })
        .catch((err: Error) => watch.log.warn(`the note that the window was opened again could not be shown: ${err.message}`));
    });
    contents.reload();
  });
}

/**
 * Logs every error nothing caught in the main process, and shows the first of the run in a dialog (later ones would
 * stack dialogs over a studio that still runs). Listening replaces Electron's own dialog for each one, which it
 * shows only while no one else listens (lib/browser/init.ts, 'uncaughtException'). A rejection nothing handled is
 * logged and shown alike, rather than left to Node's default, which would end the process.
 */
export function catchMainErrors(proc: Pick<NodeJS.Process, 'on'>, log: Logger, dialog: Pick<Dialog, 'showErrorBox'>): void {
  let shown = false;
  const caught = (what: string) => (err: unknown) => {
    const words = err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err);
    log.error(`${what}: ${words}`);
    if (shown) return;
    shown = true;
    const first = err instanceof Error ? err.message : String(err);
    dialog.showErrorBox(
      `${APP_NAME} hit an error`,
      `${log.redaction.cut(first)}\n\nThe studio goes on running; paid requests in flight are kept. The error was written to the log` +
        `${log.dir ? ` in ${log.dir}` : ''}, as any later one will be without this dialog. Copy diagnostics in Settings gives the text to send.`,
    );
  };
  proc.on('uncaughtException', caught('an error nothing caught'));
  proc.on('unhandledRejection', caught('a rejection nothing handled'));
}
