// `npm start`: the desktop app when the Electron binary is installed, else the same studio in a browser.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const run = (cmd, args) =>
  new Promise((resolve) => spawn(cmd, args, { stdio: 'inherit' }).on('exit', (code) => resolve(code ?? 1)));

if ((await run(process.execPath, ['node_modules/vite/bin/vite.js', 'build', '--logLevel', 'warn'])) !== 0) process.exit(1);

let electron = null;
try {
  electron = require('electron');
} catch {
  electron = null;
}
if (typeof electron === 'string') {
  if ((await run(process.execPath, ['scripts/build-app.mjs'])) !== 0) process.exit(1);
  process.exit(await run(electron, ['dist/app/main.mjs']));
}
console.log('The Electron binary is not installed on this machine, so the studio opens in your browser instead.');
process.exit(await run(process.execPath, ['bin/studio.mjs', 'serve', ...process.argv.slice(2)]));
