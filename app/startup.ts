import { accessSync, constants, mkdirSync } from 'node:fs';
import { defaultDataDir } from '../main/config/paths.ts';
import { APP_NAME } from './identity.ts';
import { NativeBindingMissing } from './nativeBinding.ts';

/** The parts of Electron's app used to start, injected so the order can be tested without Electron. */
export interface StartingApp {
  setName(name: string): void;
  setPath(name: 'userData', path: string): void;
  requestSingleInstanceLock(): boolean;
  on(event: 'second-instance', listener: () => void): unknown;
  whenReady(): Promise<unknown>;
  quit(): void;
  exit(code: number): void;
}

/** A data folder that cannot be made, or written to. */
export class DataFolderRefused extends Error {}

export interface ErrorDialog {
  showErrorBox(title: string, content: string): void;
}

/**
 * Sets the data folder, then asks for the single-instance lock. Electron keeps the lock in the userData
 * folder as it is when asked (RequestSingleInstanceLock in shell/browser/api/electron_api_app.cc), so the
 * folder comes first: every run on one data folder (dev or packaged) takes the same lock. setPath throws on a
 * folder that does not exist or is relative (docs/api/app.md), so it is resolved and made first.
 * Returns the folder, or null when another instance holds it (that one is told, and this one quits).
 */
export function claimDataFolder(app: StartingApp, env: NodeJS.ProcessEnv = process.env): string | null {
  app.setName(APP_NAME);
  const dir = defaultDataDir(env);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // The lock is made in this folder; where it cannot be, requestSingleInstanceLock answers false
    // (LOCK_ERROR, electron_api_app.cc) exactly as when another run holds it, and the app would quit unexplained.
    accessSync(dir, constants.W_OK);
  } catch (err) {
    throw new DataFolderRefused(`${dir} cannot be used as the data folder (${(err as Error).message}). Make it a folder you can write to, or set STUDIO_DATA_DIR to one.`);
  }
  app.setPath('userData', dir);
  if (app.requestSingleInstanceLock()) return dir;
  app.quit();
  return null;
}

/**
 * Claims the data folder, then starts once Electron is ready. A folder that cannot be claimed is explained
 * like any failed start: thrown from the entry module it would reach Electron's own uncaughtException
 * handler, which shows a dialog but does not quit (lib/browser/init.ts), leaving a process with no window.
 * Another launch is listened for as soon as the lock is held: Electron may tell of one any time after ready
 * (docs/api/app.md), long before the window exists, and an event with no listener is lost. `focus` brings the
 * window forward, or remembers to (windowFocus.ts). Signal Desktop listens at the same point
 * (signalapp/Signal-Desktop app/main.main.ts, right after requestSingleInstanceLock).
 */
export function launch(
  app: StartingApp,
  dialog: ErrorDialog,
  start: (dataDir: string) => Promise<void>,
  log: (m: string) => void,
  focus: () => void,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  let dataDir: string | null;
  try {
    dataDir = claimDataFolder(app, env);
  } catch (err) {
    return startOrExplain(app, dialog, () => Promise.reject(err), log);
  }
  if (dataDir === null) return Promise.resolve();
  app.on('second-instance', focus);
  return startOrExplain(app, dialog, () => start(dataDir), log);
}

/** What a person is told when the app cannot start: what went wrong, and what to do. */
export function explainStartFailure(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof NativeBindingMissing || err instanceof DataFolderRefused) return message;
  if (/NODE_MODULE_VERSION|was compiled against a different Node\.js version|ERR_DLOPEN_FAILED/.test(message)) {
    return `The database driver was built for another runtime (${message.split('\n')[0]}). Run "npm start" again, which builds the desktop app's own, or reinstall Take Studio.`;
  }
  return `${message}\n\nNothing was sent to a provider. Fix what the message names, then open Take Studio again.`;
}

/**
 * Runs `start` once Electron is ready. Electron only warns on an unhandled rejection in the main process
 * (electron_browser_main_parts.cc sets unhandled_rejections to "warn-with-error-code"), which would leave a
 * process with no window holding the single-instance lock; so a failure is shown (showErrorBox works before
 * ready, docs/api/dialog.md) and the process exits, freeing the lock.
 */
export function startOrExplain(app: StartingApp, dialog: ErrorDialog, start: () => Promise<void>, log: (m: string) => void): Promise<void> {
  return app
    .whenReady()
    .then(start)
    .catch((err: unknown) => {
      log(`could not start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      dialog.showErrorBox(`${APP_NAME} could not start`, explainStartFailure(err));
      app.exit(1);
    });
}
