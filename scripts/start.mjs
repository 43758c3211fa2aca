// `npm start`: the desktop app where the Electron binary is (or can be) installed, else the same studio in a
// browser. The binary is not fetched at install (package.json allowScripts), so `npm install` works on any
// machine; it is fetched here the first time, unless ELECTRON_SKIP_BINARY_DOWNLOAD says not to.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let running = null;
const run = (cmd, args) =>
  new Promise((resolve) => {
    running = spawn(cmd, args, { stdio: 'inherit' }).on('exit', (code) => resolve(code ?? 1));
  });
// A SIGTERM sent to this script alone (a process manager, `kill`) is passed on, so the app or the host it
// started stops through its own quit instead of running on orphaned. Ctrl+C and a closed terminal already
// reach the child with this whole process group; passing those on would be a second signal, which Electron
// takes as a hard kill (GracefulShutdownHandler, shell/browser/electron_browser_main_parts_posix.cc), so this
// script only waits for the child to end.
const live = () => running !== null && running.exitCode === null && running.signalCode === null;
process.on('SIGTERM', () => (live() ? running.kill('SIGTERM') : process.exit(1)));
for (const signal of ['SIGINT', 'SIGHUP']) process.on(signal, () => live() || process.exit(1));

/** The path of the Electron binary, or null; require('electron') throws until its binary is installed. */
function electronBinary() {
  try {
    const path = require('electron');
    return typeof path === 'string' ? path : null;
  } catch {
    return null;
  }
}

if ((await run(process.execPath, ['node_modules/vite/bin/vite.js', 'build', '--logLevel', 'warn'])) !== 0) process.exit(1);

let electron = electronBinary();
if (!electron && !process.env.ELECTRON_SKIP_BINARY_DOWNLOAD) {
  console.log('Fetching the Electron binary for the desktop app (once)…');
  if ((await run(process.execPath, [require.resolve('electron/install.js')])) === 0) electron = electronBinary();
}
if (electron) {
  if ((await run(process.execPath, ['scripts/build-app.mjs'])) !== 0) process.exit(1);
  if ((await run(process.execPath, ['scripts/electron-native.mjs'])) !== 0) process.exit(1);
  // "." so Electron reads package.json: the app runs as "Take Studio" (productName), not "Electron".
  process.exit(await run(electron, ['.', ...process.argv.slice(2)]));
}
console.log('The Electron binary is not installed on this machine, so the studio opens in your browser instead.');
process.exit(await run(process.execPath, ['bin/studio.mjs', 'serve', ...process.argv.slice(2)]));
