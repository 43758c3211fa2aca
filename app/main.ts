import { app, BrowserWindow, crashReporter, dialog, ipcMain, net, Notification, powerMonitor, powerSaveBlocker, protocol, safeStorage, session, shell, utilityProcess } from 'electron';
import { copyFile } from 'node:fs/promises';
import { join, normalize } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadSettings } from '../main/config/settings.ts';
import { RENDERER_DIR } from '../main/host/server.ts';
import { openLog, type Logger } from '../main/logging/logger.ts';
import { secretsIn } from '../main/logging/redact.ts';
import { catchMainErrors, startCrashReporter, watchPage } from './crashes.ts';
import { APP_ID } from './identity.ts';
import { keySnapshot } from './engineKeys.ts';
import type { EngineRequest } from './engineProtocol.ts';
import { EngineRelay, type EnginePower } from './engineRelay.ts';
import { safeKeyStore } from './keys.ts';
import { mediaResponse } from './mediaProtocol.ts';
import { electronBinding, electronBindingDir, electronDriverDir } from './nativeBinding.ts';
import { allowPermission } from './permissions.ts';
import { wirePower } from './power.ts';
import { quitOnSessionEnd, wireQuit } from './quit.ts';
import { wireStudioIpc } from './relayIpc.ts';
import { launch } from './startup.ts';
import { wireUpdates } from './updater.ts';
import { APP_CSP, isAppUrl, windowOptions } from './window.ts';
import { WindowFocus } from './windowFocus.ts';

const here = fileURLToPath(new URL('.', import.meta.url));
let logger: Logger | null = null;
// Before the logs folder is known (Electron is not ready), a line goes to the terminal alone.
const log = (m: string) => (logger ? logger.warn(m) : console.error(`studio: ${m}`));

// Both schemes are standard and secure, so the page is a normal origin and media elements can stream.
protocol.registerSchemesAsPrivileged([
  { scheme: 'app', privileges: { standard: true, secure: true, supportFetchAPI: true } },
  { scheme: 'studio-media', privileges: { standard: true, secure: true, stream: true } },
]);
// Notifications on Windows need the AppUserModelID the installer stamps on its shortcuts (electron-builder's appId).
if (process.platform === 'win32') app.setAppUserModelId(APP_ID);

let window: BrowserWindow | null = null;
const focus = new WindowFocus(() => window);

void launch(app, dialog, start, log, () => focus.request());

async function start(dataDir: string): Promise<void> {
  // Only once the data folder is claimed, so dumps are kept in it, and before the window, so its page is watched
  // (docs/api/crash-reporter.md).
  startCrashReporter(crashReporter);
  logger = openLog({ dir: app.getPath('logs'), name: 'desktop', makeParents: true }).echoing((l) => console.error(l), 'warn', 'studio: ');
  catchMainErrors(process, logger, dialog);
  const appRoot = join(here, '..', '..');
  const binding = electronBinding(electronBindingDir({ packaged: app.isPackaged, resourcesPath: process.resourcesPath, appRoot, platform: process.platform, arch: process.arch }), process.versions.modules);
  const driver = electronDriverDir(here);
  // Keys are decrypted and encrypted here, where safeStorage is; the engine gets the ones it sends with (app/engineKeys.ts).
  const keys = safeKeyStore(dataDir, safeStorage, () => loadSettings(dataDir));
  // The main process's log is cut of the keys too: the ones in keys.json and any in settings.json.
  logger.redaction.hold(() => [...Object.values(keySnapshot(keys).keys), ...secretsIn(loadSettings(dataDir))]);
  const power: EnginePower = { paidWorkInFlight: false, keepAwake: false };
  const awake = wirePower(powerMonitor, powerSaveBlocker, { renewNow: () => engine.renewNow(), paidWorkInFlight: () => power.paidWorkInFlight }, () => power.keepAwake);
  let lastUnknown = 0;
  // A finished film is announced by the page itself (renderer/src/filmReady.ts), with its project's name.
  const notify = (title: string, body: string) => Notification.isSupported() && new Notification({ title, body }).show();

  // The engine, its SQLite store and its providers run in a utility process, so nothing they do holds up the window.
  const engine = new EngineRelay({
    fork: () => utilityProcess.fork(join(here, 'engineProcess.mjs'), [], { serviceName: 'Take Studio engine' }),
    start: () => ({ dataDir, binding, driver, keys: keySnapshot(keys), logsDir: app.getPath('logs'), crashDumps: app.getPath('crashDumps') }),
    saveKey: (name, value) => keys.set(name, value),
    changed: (change, now) => {
      window?.webContents.send('studio:changed', change);
      Object.assign(power, now);
      awake.update();
      if (change.needsDecision > lastUnknown) notify('Take Studio needs your decision', 'A paid request has an outcome nobody can know. Open the studio to decide.');
      lastUnknown = change.needsDecision;
    },
    crashed: (notice) => {
      power.paidWorkInFlight = false;
      awake.update();
      const box = { type: 'warning' as const, title: 'Take Studio', ...notice };
      void (window ? dialog.showMessageBox(window, box) : dialog.showMessageBox(box));
    },
    log,
  });
  await engine.open();
  // An update installs only at quit, after the engine's stop: a paid request in flight is let finish first.
  const updates = wireUpdates(() => engine.stop(), { switchOn: () => loadSettings(dataDir).updates.checkAtStart, packaged: app.isPackaged, announce: notify, log: (m) => logger?.info(m) });
  const quit = wireQuit(app, updates.stop, { limitMs: 15_000, log });
  app.on('will-quit', () => engine.kill());
  const lookup = async (request: EngineRequest) => {
    const answer = await engine.request(request);
    return 'result' in answer ? (answer.result as string | null) : null;
  };

  // The app's pages come only from this handler, so the Content-Security-Policy header is set here.
  protocol.handle('app', async (request) => {
    const path = new URL(request.url).pathname;
    const file = normalize(join(RENDERER_DIR, path === '/' ? 'index.html' : path));
    if (!file.startsWith(RENDERER_DIR)) return new Response('not found', { status: 404 });
    const res = await net.fetch(pathToFileURL(file).toString());
    const headers = new Headers(res.headers);
    headers.set('Content-Security-Policy', APP_CSP);
    headers.set('X-Content-Type-Options', 'nosniff');
    return new Response(res.body, { status: res.status, headers });
  });
  protocol.handle('studio-media', (request) =>
    mediaResponse(
      request,
      (taskId, index) => lookup({ kind: 'outputPath', taskId, index }),
      (project, sha256) => lookup({ kind: 'ownPicturePath', project, sha256 }),
    ),
  );

  session.defaultSession.setPermissionRequestHandler((_wc, permission, callback, details) => callback(allowPermission(permission, details.requestingUrl)));
  session.defaultSession.setPermissionCheckHandler((_wc, permission, _origin, details) => allowPermission(permission, details.requestingUrl));

  wireStudioIpc({
    ipc: ipcMain,
    request: (request) => engine.request(request),
    files: { dialog, shell, copyFile, downloadsDir: () => app.getPath('downloads'), window: () => window },
    log,
  });

  window = new BrowserWindow(windowOptions(join(here, 'preload.cjs'), app.isPackaged));
  watchPage(window.webContents, { log: logger, dialog, window, quit: () => app.quit(), quitting: quit.started });
  window.webContents.setWindowOpenHandler(() => ({ action: 'deny' }));
  window.webContents.on('will-navigate', (event, url) => {
    if (!isAppUrl(url)) event.preventDefault();
  });
  window.webContents.on('will-redirect', (event, url) => {
    if (!isAppUrl(url)) event.preventDefault();
  });
  window.webContents.on('will-attach-webview', (event) => event.preventDefault());
  window.once('ready-to-show', () => {
    // A window that loads after the person quit stays hidden while the engine stops: it would open only to vanish.
    if (quit.started()) return;
    window?.show();
    focus.shown();
  });
  // A closed window throws on every call ("Object has been destroyed"), and the process lives on while the
  // engine stops; so it is let go here (docs/api/browser-window.md, 'closed').
  window.on('closed', () => (window = null));
  await window.loadURL('app://studio/index.html');

  app.on('window-all-closed', () => app.quit());
  // Told before the quit the session end starts, so that quit installs nothing.
  window.on('session-end', updates.sessionEnding);
  powerMonitor.on('shutdown', updates.sessionEnding);
  quitOnSessionEnd(window, powerMonitor, app);
  // No page, whatever it is, may open a window.
  app.on('web-contents-created', (_e, contents) => contents.setWindowOpenHandler(() => ({ action: 'deny' })));
}
