import { app, BrowserWindow, dialog, ipcMain, net, Notification, powerMonitor, powerSaveBlocker, protocol, safeStorage, session, shell } from 'electron';
import { copyFile } from 'node:fs/promises';
import { basename, join, normalize } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ownPicturePath } from '../main/api/ownUpload.ts';
import { ApiError } from '../main/api/studioService.ts';
import { useNativeBinding } from '../main/db/nativeBinding.ts';
import { RENDERER_DIR, watchChanges } from '../main/host/server.ts';
import { startRuntime, type Runtime } from '../main/runtime.ts';
import { APP_ID } from './identity.ts';
import { checkCall, checkFileCall, IpcRefused } from './ipcValidation.ts';
import { safeKeyStore } from './keys.ts';
import { mediaResponse } from './mediaProtocol.ts';
import { wireOwnPictures } from './ownPicture.ts';
import { fileName, OutputFileRefused, saveOutputAs, showOutputInFolder, type OutputFileDeps } from './outputFile.ts';
import { electronBinding, electronBindingDir } from './nativeBinding.ts';
import { allowPermission } from './permissions.ts';
import { wirePower } from './power.ts';
import { quitOnSessionEnd, wireQuit } from './quit.ts';
import { launch } from './startup.ts';
import { APP_CSP, isAppUrl, windowOptions } from './window.ts';

const here = fileURLToPath(new URL('.', import.meta.url));
const log = (m: string) => console.error(`studio: ${m}`);

// Both schemes are standard and secure, so the page is a normal origin and media elements can stream.
protocol.registerSchemesAsPrivileged([
  { scheme: 'app', privileges: { standard: true, secure: true, supportFetchAPI: true } },
  { scheme: 'studio-media', privileges: { standard: true, secure: true, stream: true } },
]);
// Notifications on Windows need the AppUserModelID the installer stamps on its shortcuts (electron-builder's appId).
if (process.platform === 'win32') app.setAppUserModelId(APP_ID);

void launch(app, dialog, start, log);

let window: BrowserWindow | null = null;

async function start(dataDir: string): Promise<void> {
  const appRoot = join(here, '..', '..');
  const bindingDir = electronBindingDir({ packaged: app.isPackaged, resourcesPath: process.resourcesPath, appRoot, platform: process.platform, arch: process.arch });
  useNativeBinding(electronBinding(bindingDir, process.versions.modules));
  const runtime: Runtime = await startRuntime(dataDir, {
    keyStore: (studio) => safeKeyStore(dataDir, safeStorage, () => studio.settings),
    mediaUrl: (id) => `studio-media://task/${id}`,
    log,
  });
  wireQuit(app, runtime.stop, { limitMs: 15_000, log });
  const outputPath = async (id: number, index: number) => {
    const found = await runtime.studio.files.file(id, index, `task ${id}'s result`);
    return found?.state === 'here' ? found.path : null;
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
  protocol.handle('studio-media', (request) => mediaResponse(request, outputPath, (project, sha256) => ownPicturePath(runtime.studio, project, sha256)));

  session.defaultSession.setPermissionRequestHandler((_wc, permission, callback, details) => callback(allowPermission(permission, details.requestingUrl)));
  session.defaultSession.setPermissionCheckHandler((_wc, permission, _origin, details) => allowPermission(permission, details.requestingUrl));

  ipcMain.handle('studio', async (event, method: string, args: unknown[]) => {
    try {
      checkCall(method, args, event.senderFrame ? { url: event.senderFrame.url, isMainFrame: event.senderFrame === event.sender.mainFrame } : null);
      const result = await (runtime.service[method] as (...a: unknown[]) => Promise<unknown>)(...args);
      return { result: result ?? null };
    } catch (err) {
      if (err instanceof ApiError || err instanceof IpcRefused) return { error: err.message };
      console.error(err);
      return { error: 'the studio hit an internal error; it was logged' };
    }
  });

  /** A finished task's output file and the name to offer for it, read before the dialog or the file manager opens. */
  const outputOf = async (id: number) => {
    const task = await runtime.studio.tasks.get(id);
    if (!task?.outputPath || task.status !== 'SUCCEEDED') return null;
    const project = (await runtime.studio.projects.list()).find((p) => p.id === task.projectId)?.name ?? 'video';
    const path = runtime.studio.media.resolve(task.outputPath);
    return { path, name: fileName(project, task.kind, id, path, (task.input as { preset?: string }).preset) };
  };
  wireOwnPictures(ipcMain, runtime.studio, log);
  ipcMain.handle('studio:file', async (event, action: unknown, args: unknown) => {
    try {
      checkFileCall(action, args, event.senderFrame ? { url: event.senderFrame.url, isMainFrame: event.senderFrame === event.sender.mainFrame } : null);
      const taskId = (args as number[])[0]!;
      const output = await outputOf(taskId);
      const files: OutputFileDeps<BrowserWindow> = {
        dialog,
        shell,
        copyFile,
        downloadsDir: () => app.getPath('downloads'),
        window: () => window,
        output: () => output,
      };
      if (action === 'showOutputInFolder') {
        showOutputInFolder(files, taskId);
        return { result: null };
      }
      // Only the name goes back to the page, to say where the copy went.
      const saved = await saveOutputAs(files, taskId);
      return { result: saved && basename(saved) };
    } catch (err) {
      if (err instanceof IpcRefused || err instanceof OutputFileRefused) return { error: err.message };
      console.error(err);
      return { error: 'the studio hit an internal error; it was logged' };
    }
  });

  let lastUnknown = 0;
  // A finished film is announced by the page itself (renderer/src/filmReady.ts), with its project's name.
  const notify = (title: string, body: string) => Notification.isSupported() && new Notification({ title, body }).show();
  const power = wirePower(powerMonitor, powerSaveBlocker, runtime.supervisor, () => runtime.studio.settings.ui.keepAwake);
  const stopWatching = watchChanges(
    runtime.studio.store.watch(),
    (change) => {
      window?.webContents.send('studio:changed', change);
      power.update();
      if (change.needsDecision > lastUnknown) notify('Take Studio needs your decision', 'A paid request has an outcome nobody can know. Open the studio to decide.');
      lastUnknown = change.needsDecision;
    },
    log,
  );

  window = new BrowserWindow(windowOptions(join(here, 'preload.cjs'), app.isPackaged));
  window.webContents.setWindowOpenHandler(() => ({ action: 'deny' }));
  window.webContents.on('will-navigate', (event, url) => {
    if (!isAppUrl(url)) event.preventDefault();
  });
  window.webContents.on('will-redirect', (event, url) => {
    if (!isAppUrl(url)) event.preventDefault();
  });
  window.webContents.on('will-attach-webview', (event) => event.preventDefault());
  window.once('ready-to-show', () => window?.show());
  // A closed window throws on every call ("Object has been destroyed"), and the process lives on while the
  // engine stops; so it is let go here (docs/api/browser-window.md, 'closed').
  window.on('closed', () => (window = null));
  await window.loadURL('app://studio/index.html');

  app.on('second-instance', () => {
    if (window?.isMinimized()) window.restore();
    window?.focus();
  });
  app.on('window-all-closed', () => app.quit());
  app.on('will-quit', stopWatching);
  quitOnSessionEnd(window, powerMonitor, app);
  // No page, whatever it is, may open a window.
  app.on('web-contents-created', (_e, contents) => contents.setWindowOpenHandler(() => ({ action: 'deny' })));
}
