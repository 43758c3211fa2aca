// A desktop main process cut down to what updates touch, run by test/updates.test.ts under Node with the
// Electron stand-in (test/fakes/electron): electron-updater's own updater for this platform, wired as
// app/main.ts wires it (the switch read from settings.json in UPDATE_TEST_DATA), around wireQuit and an
// engine whose stop resolves UPDATE_TEST_STOP_MS after it is asked and then writes "engine stopped" to the
// journal the installed artifact also writes to.
import { appendFileSync } from 'node:fs';
import { EventEmitter } from 'node:events';
import { app, powerMonitor } from 'electron';
import { quitOnSessionEnd, wireQuit } from '../../app/quit.ts';
import { loadSettings } from '../../main/config/settings.ts';
import { wireUpdates } from '../../app/updater.ts';

const env = process.env;
const say = (what: string, detail: unknown) => process.stderr.write(`updating-app: ${what} ${JSON.stringify(detail)}\n`);
const log = (m: string) => say('log', m);

app.setPath('userData', env.UPDATE_TEST_DATA!);
const engineStop = () =>
  new Promise<void>((resolve, reject) =>
    setTimeout(() => {
      if (env.UPDATE_TEST_STOP === 'fails') return reject(new Error('the engine could not stop'));
      appendFileSync(env.UPDATE_TEST_JOURNAL!, 'engine stopped\n');
      resolve();
    }, Number(env.UPDATE_TEST_STOP_MS ?? 0)),
  );
const updates = wireUpdates(engineStop, {
  switchOn: () => loadSettings(env.UPDATE_TEST_DATA!).updates.checkAtStart,
  packaged: app.isPackaged,
  announce: (title, body) => say('announce', { title, body }),
  log,
  delayMs: 0,
  intervalMs: env.UPDATE_TEST_INTERVAL_MS ? Number(env.UPDATE_TEST_INTERVAL_MS) : undefined,
});
wireQuit(app, updates.stop, { limitMs: Number(env.UPDATE_TEST_LIMIT_MS ?? 15_000), log });

// The window's session-end and powerMonitor's shutdown, as app/main.ts wires them; SIGUSR2 plays the OS's shutdown.
const window = new EventEmitter();
quitOnSessionEnd(window, powerMonitor, app);
window.on('session-end', updates.sessionEnding);
powerMonitor.on('shutdown', updates.sessionEnding);
process.on('SIGUSR2', () => powerMonitor.emit('shutdown', { preventDefault: () => undefined }));

// Electron's message loop keeps the process until it quits.
setInterval(() => undefined, 60_000);
say('ready', {});
