// Stages the desktop app's database driver for one OS and arch, apart from node_modules/better-sqlite3, which
// the CLI and the tests load under Node:
//   dist/app/better-sqlite3/                  its JavaScript, packed into the app's archive beside the bundle
//   dist/native/electron-<platform>-<arch>/   its binary, the Electron ABI and the version it was staged for
//                                             (electron-builder's extraResources)
// The driver is better-sqlite3 13, pinned with its integrity in package.json (config.electronSqlite). 12, which
// runs on Node 20, publishes prebuilt binaries per Electron ABI only up to Electron 42 (its build workflow's
// ELECTRON_BUILD_CMD_MODERN), none for Electron 45 (ABI 150). 13 is a Node-API addon (binding.gyp:
// NAPI_VERSION=10), one binary per OS and arch for every runtime with Node-API 10, carried in its npm package
// (prebuilds/<platform>-<arch>.node), and it needs Node 22, so the app loads it and never the CLI. 12's and 13's
// JavaScript speak to their binaries differently (lib/database.js: setErrorConstructor in 12, initialize in 13),
// so the app loads both halves from here.
//   node scripts/electron-native.mjs [--platform linux|darwin|win32] [--arch x64|arm64]
// Exits 2 when the package could not be downloaded, printing one line that says how to supply it; 1 otherwise.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { platform: { type: 'string' }, arch: { type: 'string' } } });
const platform = values.platform ?? process.platform;
const arch = values.arch ?? process.arch;
const electronDir = join('node_modules', 'electron');
const electronVersion = JSON.parse(readFileSync(join(electronDir, 'package.json'), 'utf8')).version;
const abi = readFileSync(join(electronDir, 'abi_version'), 'utf8').trim();
const pin = JSON.parse(readFileSync('package.json', 'utf8')).config?.electronSqlite;
if (typeof pin?.version !== 'string' || !/^sha512-[A-Za-z0-9+/]{86}==$/.test(pin?.integrity ?? '')) {
  fail(1, 'package.json must pin the desktop database driver as config.electronSqlite: { "version": "<better-sqlite3 version>", "integrity": "sha512-..." } (npm view better-sqlite3@<version> dist.integrity).');
}
const spec = `better-sqlite3@${pin.version}`;
const jsDir = join('dist', 'app', 'better-sqlite3');
const out = join('dist', 'native', `electron-${platform}-${arch}`);
const stamp = join(out, 'abi');
const read = (file) => (existsSync(file) ? readFileSync(file, 'utf8').trim() : null);

const staged =
  existsSync(join(out, 'better_sqlite3.node')) &&
  read(stamp) === abi &&
  read(join(out, 'version')) === pin.version &&
  existsSync(join(jsDir, 'lib', 'index.js')) &&
  JSON.parse(read(join(jsDir, 'package.json')) ?? '{}').version === pin.version;
if (staged) process.exit(0);

const stage = join('dist', 'native', `stage-${platform}-${arch}`);
rmSync(stage, { recursive: true, force: true });
mkdirSync(stage, { recursive: true });
const tarball = join(stage, fetchTarball());
const integrity = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`;
if (integrity !== pin.integrity) {
  fail(1, `${process.env.STUDIO_SQLITE_TARBALL || `The tarball npm fetched for ${spec}`} is not ${spec} as pinned: its sha512 differs from package.json's config.electronSqlite.integrity. Nothing was installed.`);
}
// tar runs in the stage with a relative name: GNU tar (Git for Windows) reads "C:\..." as a remote host.
const untar = spawnSync('tar', ['-xzf', basename(tarball)], { cwd: stage, encoding: 'utf8' });
if (untar.status !== 0) fail(1, `Could not unpack ${tarball} with tar: ${(untar.stderr || String(untar.error)).trim()}`);
const pkg = join(stage, 'package');
const prebuilds = join(pkg, 'prebuilds');
const binary = join(prebuilds, `${platform}-${arch}.node`);
if (!existsSync(binary)) {
  const has = existsSync(prebuilds) ? readdirSync(prebuilds).map((f) => basename(f, '.node')).join(', ') : 'none';
  fail(1, `${spec} has no prebuilt database driver for ${platform}-${arch} (it has: ${has}); Electron ${electronVersion} builds are made for those.`);
}

// Where the build is for this machine and Electron is installed, the staged driver must open a database in
// that Electron, run as Node (ELECTRON_RUN_AS_NODE), and report Electron's ABI, not Node's.
const electron = platform === process.platform && arch === process.arch ? installedElectron() : null;
if (electron) {
  const probe = `const D = require(${JSON.stringify(join(process.cwd(), pkg, 'lib', 'index.js'))}); new D(':memory:', { nativeBinding: ${JSON.stringify(join(process.cwd(), binary))} }).prepare('SELECT 1').get(); process.stdout.write(process.versions.modules);`;
  const run = spawnSync(electron, ['-e', probe], { encoding: 'utf8', env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' } });
  if (run.status !== 0 || run.stdout.trim() !== abi) {
    fail(1, `${spec} did not open a database in Electron ${electronVersion} (ABI ${abi}): ${(run.stderr || run.stdout || String(run.error)).trim().split('\n')[0]}. Nothing was installed.`);
  }
}

// The JavaScript and the stamps arrive last, each whole by a rename: a run killed halfway leaves nothing the
// next run (or the app) would trust.
rmSync(jsDir, { recursive: true, force: true });
rmSync(`${jsDir}.part`, { recursive: true, force: true });
mkdirSync(`${jsDir}.part`, { recursive: true });
copyFileSync(join(pkg, 'package.json'), join(`${jsDir}.part`, 'package.json'));
cpSync(join(pkg, 'lib'), join(`${jsDir}.part`, 'lib'), { recursive: true });
renameSync(`${jsDir}.part`, jsDir);
mkdirSync(out, { recursive: true });
rmSync(stamp, { force: true });
copyFileSync(binary, join(out, 'better_sqlite3.node.part'));
renameSync(join(out, 'better_sqlite3.node.part'), join(out, 'better_sqlite3.node'));
writeFileSync(join(out, 'version'), `${pin.version}\n`);
writeFileSync(stamp, `${abi}\n`);
rmSync(stage, { recursive: true, force: true });
console.log(`Staged the database driver (${spec}) for Electron ${electronVersion} (ABI ${abi}) on ${platform}-${arch}${electron ? ', and opened a database with it in Electron' : ''}.`);

/** The tarball's file name in the stage: the file STUDIO_SQLITE_TARBALL names, else npm's download. */
function fetchTarball() {
  const local = process.env.STUDIO_SQLITE_TARBALL;
  if (local) {
    if (!existsSync(local)) fail(1, `STUDIO_SQLITE_TARBALL names ${local}, which does not exist; set it to the file \`npm pack ${spec}\` writes.`);
    copyFileSync(local, join(stage, basename(local)));
    return basename(local);
  }
  // npm itself, so its registry, proxy and cache settings apply; the pinned version and integrity allow its cache.
  const cli = process.env.npm_execpath;
  const [cmd, ...pre] = cli && /npm-cli\.js$/.test(cli) ? [process.execPath, cli] : [process.platform === 'win32' ? 'npm.cmd' : 'npm'];
  const packed = spawnSync(cmd, [...pre, 'pack', spec, '--pack-destination', '.', '--prefer-offline', '--json', '--loglevel', 'error'], {
    cwd: stage,
    encoding: 'utf8',
    // Node refuses to spawn a .cmd without a shell; the arguments hold no paths or spaces to quote.
    shell: cmd.endsWith('.cmd'),
  });
  // With --json, npm writes the packed files, or its error's one-line summary, to stdout.
  let answer;
  try {
    answer = JSON.parse(packed.stdout);
  } catch {
    answer = undefined;
  }
  const file = packed.status === 0 ? answer?.[0]?.filename : undefined;
  if (typeof file !== 'string' || !existsSync(join(stage, file))) {
    const reason = answer?.error?.summary ?? (packed.error ? String(packed.error) : `npm exited ${packed.status}`);
    fail(2, `Could not download ${spec}, the desktop app's database driver (${reason}). Connect to your npm registry, or point npm's registry setting at a mirror that has it, or fetch it on another machine (npm pack ${spec}) and set STUDIO_SQLITE_TARBALL to that file.`);
  }
  return file;
}

/** Electron's binary, if installed; read as its index.js does, which would otherwise start a download. */
function installedElectron() {
  const path = read(join(electronDir, 'path.txt'));
  const exe = path && join(electronDir, 'dist', path);
  return exe && existsSync(exe) ? exe : null;
}

function fail(code, message) {
  console.error(message);
  rmSync(join('dist', 'native', `stage-${platform}-${arch}`), { recursive: true, force: true });
  process.exit(code);
}
