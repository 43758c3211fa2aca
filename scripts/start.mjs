// `npm start`: the desktop app where the Electron binary is (or can be) installed, else the same studio in a
// browser. The binary is not fetched at install (package.json allowScripts), so `npm install` works on any
// machine; it is fetched here the first time, unless ELECTRON_SKIP_BINARY_DOWNLOAD says not to. STUDIO_BROWSER=1
// asks for the browser where the desktop app could run too.
//
// Where the download fails, that is said in one line (its output with --verbose) and remembered, so later starts
// go straight to the browser until --retry-electron; these two flags are this script's own, not passed on.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
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

const OWN_FLAGS = ['--verbose', '--retry-electron'];
const given = process.argv.slice(2);
const verbose = given.includes('--verbose');
const retryElectron = given.includes('--retry-electron');
const passedOn = given.filter((arg) => !OWN_FLAGS.includes(arg));

/**
 * Where a failed download is remembered: this project's folder in node_modules/.cache, or under CACHE_DIR, the
 * convention tools keeping caches there share (sindresorhus/find-cache-dir readme). Kept per Electron version,
 * so a new one is tried once.
 */
const cacheRoot = process.env.CACHE_DIR && !['true', 'false', '1', '0'].includes(process.env.CACHE_DIR) ? process.env.CACHE_DIR : join('node_modules', '.cache');
const failureMarker = join(cacheRoot, 'take-studio', 'electron-download-failed.json');
const electronVersion = require('electron/package.json').version;

/** What the failed download said, where one failed for this Electron version; else null. */
function rememberedFailure() {
  try {
    const kept = JSON.parse(readFileSync(failureMarker, 'utf8'));
    return kept.version === electronVersion ? String(kept.output) : null;
  } catch {
    return null;
  }
}

/** Runs Electron's own install script (it reads the mirror and cache settings, ELECTRON_MIRROR and the like); its output is shown only with --verbose. */
function downloadElectron() {
  return new Promise((resolve) => {
    let output = '';
    running = spawn(process.execPath, [require.resolve('electron/install.js')], { stdio: ['ignore', 'pipe', 'pipe'] });
    for (const stream of [running.stdout, running.stderr]) {
      stream.on('data', (chunk) => {
        output += chunk;
        if (verbose) process.stderr.write(chunk);
      });
    }
    // Stopped by a signal (Ctrl+C), it did not fail: nothing is remembered, and nothing more is started.
    running.on('exit', (code, signal) => (signal ? process.exit(1) : resolve({ ok: code === 0, output })));
  });
}

/**
 * The path of the Electron binary, or null where it is not installed. Found as the electron package finds it
 * (getElectronPath in its index.js: the name in path.txt, under dist/ or ELECTRON_OVERRIDE_DIST_PATH), not by
 * requiring the package, which runs the download itself when the binary is missing, printing all it says.
 */
function electronBinary() {
  const dir = dirname(require.resolve('electron/package.json'));
  let executable;
  try {
    executable = readFileSync(join(dir, 'path.txt'), 'utf8');
  } catch {
    return null;
  }
  const path = process.env.ELECTRON_OVERRIDE_DIST_PATH ? join(process.env.ELECTRON_OVERRIDE_DIST_PATH, executable) : join(dir, 'dist', executable);
  return existsSync(path) ? path : null;
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
const RETRY = '`npm start -- --retry-electron` tries again';
if (!electron && !inBrowser && !process.env.ELECTRON_SKIP_BINARY_DOWNLOAD) {
  const earlier = retryElectron ? null : rememberedFailure();
  if (earlier !== null) {
    if (verbose) process.stderr.write(earlier);
    console.log(`The desktop app's Electron could not be downloaded here last time, so the studio opens in your browser; ${RETRY}.`);
  } else {
    console.log('Fetching the Electron binary for the desktop app (once)…');
    const download = await downloadElectron();
    electron = download.ok ? electronBinary() : null;
    if (electron) rmSync(failureMarker, { force: true });
    else {
      mkdirSync(join(cacheRoot, 'take-studio'), { recursive: true });
      writeFileSync(failureMarker, JSON.stringify({ version: electronVersion, at: new Date().toISOString(), output: download.output }, null, 1));
      console.log(`The desktop app's Electron could not be downloaded here, so the studio opens in your browser; ${RETRY}${verbose ? '' : ' (`--verbose` shows why)'}.`);
    }
  }
} else if (!electron && !inBrowser) console.log('The Electron binary is not installed on this machine, so the studio opens in your browser instead.');
if (electron) {
  if ((await run(process.execPath, ['scripts/build-app.mjs'])) !== 0) process.exit(1);
  if ((await run(process.execPath, ['scripts/electron-native.mjs'])) !== 0) process.exit(1);
  // "." so Electron reads package.json: the app runs as "Take Studio" (productName), not "Electron".
  process.exit(await run(electron, ['.', ...passedOn]));
}
process.exit(await run(process.execPath, [await cliBundle(), 'serve', ...passedOn]));
