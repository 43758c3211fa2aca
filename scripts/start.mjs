// `npm start`: the desktop app where the Electron binary is (or can be) installed, else the same studio in a
// browser. The binary is not fetched at install (package.json allowScripts), so `npm install` works on any
// machine; it is fetched here the first time, unless ELECTRON_SKIP_BINARY_DOWNLOAD says not to. STUDIO_BROWSER=1
// asks for the browser where the desktop app could run too.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { build } from 'esbuild';

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

const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');

/**
 * Whether a build is current: every file it read (listed, with its content hash, in the stamp it wrote) still
 * reads the same. A missing stamp, file or match means a build.
 */
function isCurrent(stamp) {
  try {
    const entries = Object.entries(JSON.parse(readFileSync(stamp, 'utf8')).files);
    return entries.length > 0 && entries.every(([file, hash]) => sha256(file) === hash);
  } catch {
    return false;
  }
}

/**
 * The CLI as one file, for the browser host: loading it takes a fraction of compiling the TypeScript at each
 * start. At the source tree's depth (dist/cli/), so the engine's import.meta.url paths hold, as in the desktop
 * app's bundle (build-app.mjs). Built again when any file it was made from changes.
 */
async function cliBundle() {
  const out = 'dist/cli/studio.mjs';
  const stamp = 'dist/cli/build-stamp.json';
  if (isCurrent(stamp)) return out;
  const { metafile } = await build({
    stdin: { contents: "import { main } from './main/cli/main.ts';\nprocess.exitCode = await main(process.argv.slice(2));\n", resolveDir: '.', loader: 'ts', sourcefile: 'studio-cli.ts' },
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    packages: 'external',
    outfile: out,
    sourcemap: true,
    metafile: true,
    logLevel: 'warning',
  });
  // The entry is written here, so this file stands for it.
  const read = Object.keys(metafile.inputs).filter((f) => f !== 'studio-cli.ts');
  writeFileSync(stamp, JSON.stringify({ files: Object.fromEntries([...read, 'package-lock.json', 'scripts/start.mjs'].map((f) => [f, sha256(f)])) }, null, 1));
  return out;
}

if (!isCurrent('dist/renderer/build-stamp.json') && (await run(process.execPath, ['node_modules/vite/bin/vite.js', 'build', '--logLevel', 'warn'])) !== 0) process.exit(1);

const inBrowser = Boolean(process.env.STUDIO_BROWSER);
let electron = inBrowser ? null : electronBinary();
if (!electron && !inBrowser && !process.env.ELECTRON_SKIP_BINARY_DOWNLOAD) {
  console.log('Fetching the Electron binary for the desktop app (once)…');
  if ((await run(process.execPath, [require.resolve('electron/install.js')])) === 0) electron = electronBinary();
}
if (electron) {
  if ((await run(process.execPath, ['scripts/build-app.mjs'])) !== 0) process.exit(1);
  if ((await run(process.execPath, ['scripts/electron-native.mjs'])) !== 0) process.exit(1);
  // "." so Electron reads package.json: the app runs as "Take Studio" (productName), not "Electron".
  process.exit(await run(electron, ['.', ...process.argv.slice(2)]));
}
if (!inBrowser) console.log('The Electron binary is not installed on this machine, so the studio opens in your browser instead.');
process.exit(await run(process.execPath, [await cliBundle(), 'serve', ...process.argv.slice(2)]));
