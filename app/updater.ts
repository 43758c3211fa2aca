import electronUpdater, { type AppUpdater } from 'electron-updater';
import { readyMessage, updateCheck } from './updatePolicy.ts';

/** The parts of electron-updater's updater the wiring uses. */
type Updater = Pick<AppUpdater, 'autoDownload' | 'autoInstallOnAppQuit' | 'logger' | 'checkForUpdates' | 'on'>;

export interface UpdatesOptions {
  /** The Settings switch (settings.json `updates.checkAtStart`), read at start, at each check, when an update is ready, and after the engine's stop. */
  switchOn: () => boolean;
  /** Electron's app.isPackaged. */
  packaged: boolean;
  /** Tells the person, once, that an update is ready (a notification). */
  announce: (title: string, body: string) => void;
  log: (m: string) => void;
  /** How long after start the first check waits. */
  delayMs?: number;
  /** How long after one check the next one is made, while no update is ready. */
  intervalMs?: number;
}

/** VS Code looks again every hour while it runs (abstractUpdateService.ts scheduleCheckForUpdates). */
const HOUR_MS = 60 * 60 * 1000;

/** What app/main.ts wires: the stop wireQuit runs, and what the OS's session end tells. */
export interface Updates {
  /** The engine's stop, for wireQuit: the install at quit stays off until it has resolved. */
  stop: () => Promise<void>;
  /** The OS is ending the session: this quit installs nothing, and the update waits for the next. */
  sessionEnding: () => void;
}

/**
 * Updates as VS Code and Signal Desktop do them: checks at start and hourly that never interrupt (an error is logged,
 * and shown only for a check the person asked for: microsoft/vscode src/vs/platform/update/electron-main/
 * updateService.win32.ts doCheckForUpdates; Signal's ts/updater/common.main.ts downloads in the background
 * when its setting allows and announces the update once), a download in the background, and the install when
 * the app quits, never by quitAndInstall.
 *
 * On Windows and Linux electron-updater installs from a listener on app's 'quit' (BaseUpdater.addQuitHandler
 * through ElectronAppAdapter.onQuit, which runs NsisUpdater's or AppImageUpdater's doInstall). Electron emits
 * 'quit' only after a before-quit nobody prevented and will-quit (shell/browser/browser.cc Quit,
 * NotifyAndShutdown, Shutdown), and wireQuit prevents the first before-quit until the engine's stop settles.
 * On top of that order, the stop returned here keeps the install off until the engine's stop has resolved:
 * a stop that fails or overruns wireQuit's limit leaves the downloaded update for a later quit. So does a
 * quit at the end of the OS session, which can kill the installer halfway and leave the app broken
 * (electron-builder website/docs/features/auto-update.md, its session-end guard; electron-userland/
 * electron-builder#7807). On macOS, MacUpdater hands the download to Squirrel.Mac when it completes, which
 * applies it only once the app's process has gone (electron docs/api/auto-updater.md), so after the stop.
 */
export function wireUpdates(stop: () => Promise<void>, options: UpdatesOptions): Updates {
  const plan = updateCheck({ switchOn: options.switchOn(), packaged: options.packaged, platform: process.platform, appImage: process.env.APPIMAGE });
  if (!plan.check) {
    options.log(`updates: not looking for one, as ${plan.why}`);
    return { stop, sessionEnding: () => undefined };
  }
  // electron-updater's updater for this platform, made on first use (electron-updater out/main.js).
  const updater: Updater = electronUpdater.autoUpdater;
  // electron-updater's own account of each step (and of each error, which it logs itself) goes to the app's log.
  const say = (m: unknown) => options.log(`updates: ${String(m)}`);
  updater.logger = { info: say, warn: say, error: say };
  updater.autoDownload = true;
  // Must be on when the download completes, or no quit listener is added (BaseUpdater.addQuitHandler).
  updater.autoInstallOnAppQuit = true;
  // Once an update is ready no more checks are made, as VS Code checks only from its idle state, so it is announced once.
  let ready = false;
  updater.on('update-downloaded', (update) => {
    ready = true;
    // A download that ends after the switch was turned off is not installed at quit, so nothing is promised.
    if (!stillOn('not announcing the update')) return;
    const { title, body } = readyMessage(update.version);
    options.log(`updates: ${title}. ${body}`);
    options.announce(title, body);
  });
  // Read again at each check and at quit, so a switch turned off meanwhile checks and installs nothing; a settings
  // file that no longer reads counts as off.
  const stillOn = (what: string) => {
    try {
      return options.switchOn();
    } catch (err) {
      options.log(`updates: ${what}, as the switch cannot be read (${(err as Error).message})`);
      return false;
    }
  };
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  const next = (delayMs: number) => {
    timer = setTimeout(async () => {
      if (stillOn('not looking this time')) await check(updater, options.log);
      if (!ready && !stopping) next(options.intervalMs ?? HOUR_MS);
    }, delayMs);
  };
  // Not before the window is up, as VS Code waits for its first window (abstractUpdateService.ts initialize).
  next(options.delayMs ?? 10_000);
  let sessionEnded = false;
  return {
    stop: async () => {
      stopping = true;
      clearTimeout(timer);
      updater.autoInstallOnAppQuit = false;
      await stop();
      updater.autoInstallOnAppQuit = !sessionEnded && stillOn('not installing at this quit');
    },
    sessionEnding: () => {
      sessionEnded = true;
      updater.autoInstallOnAppQuit = false;
    },
  };
}

/** One check, and the download it starts; any failure (offline, no feed, a bad checksum or signature) is only logged. */
async function check(updater: Updater, log: (m: string) => void): Promise<void> {
  try {
    const result = await updater.checkForUpdates();
    await result?.downloadPromise;
  } catch (err) {
    log(`updates: none this time (${String((err as Error).message ?? err).split('\n')[0]}); it looks again in an hour and at the next start`);
  }
}
