// The desktop's crash wiring (app/crashes.ts) under the Electron stand-in, wired as the app wires it, for
// test/crashes.test.ts: node --import tsx --import test/fakes/electron/loader.mjs test/helpers/crashHarness.ts
// HARNESS_DATA is the data folder; HARNESS_THROW=1 makes the main process fail twice and leave a rejection unhandled;
// HARNESS_QUIT_BEFORE_LOAD=1 quits before the page loads, the quit held 300 ms as an engine's stop holds it.
import { app, BrowserWindow, crashReporter, dialog, ipcMain, protocol } from 'electron';
import { catchMainErrors, startCrashReporter, watchPage } from '../../app/crashes.ts';
import { wireQuit } from '../../app/quit.ts';
import { openLog } from '../../main/logging/logger.ts';

startCrashReporter(crashReporter);
app.setPath('userData', process.env.HARNESS_DATA!);
const log = openLog({ dir: app.getPath('logs'), name: 'desktop', makeParents: true });
catchMainErrors(process, log, dialog);
protocol.handle('app', async () => new Response('<title>Take Studio</title>', { headers: { 'content-type': 'text/html' } }));
ipcMain.handle('studio', async () => ({ result: [] }));
const window = new BrowserWindow({ webPreferences: {} });
const quit = wireQuit(app, () => new Promise((resolve) => setTimeout(resolve, 300)), { limitMs: 15_000, log: (m) => log.info(m) });
watchPage(window.webContents, { log, dialog, window, quit: () => app.quit(), quitting: quit.started });
if (process.env.HARNESS_QUIT_BEFORE_LOAD === '1') app.quit();
await window.loadURL('app://studio/index.html');
if (process.env.HARNESS_THROW === '1') {
  setTimeout(() => {
    throw new Error('the first failure, with sk-proj-AbCdEfGhIjKlMnOpQrStUv123 in it');
  }, 10);
  setTimeout(() => {
    throw new Error('the second failure');
  }, 20);
  setTimeout(() => void Promise.reject(new Error('a rejection nothing handled')), 30);
}
setTimeout(() => app.quit(), 800);
