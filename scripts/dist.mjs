// `npm run dist [-- --platform linux|darwin|win32 --arch x64|arm64 --electron-dist <zip or folder>]`: the
// installers for one OS, by default this machine's. Builds the UI and the shell, makes sure Electron's zip is
// at hand before anything slow, stages the database driver for Electron (scripts/electron-native.mjs), fetches
// that OS's ffmpeg and ffprobe packages when another OS is the target, then runs electron-builder.
// A download that fails ends the run with exit code 2 and a message saying which file it was and how to supply
// it (docs/releasing.md, "Building offline"); any other failure exits 1.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { downloadFailure } from './downloadFailure.mjs';

const require = createRequire(import.meta.url);
const { values } = parseArgs({ options: { platform: { type: 'string' }, arch: { type: 'string' }, 'electron-dist': { type: 'string' } } });
const platform = values.platform ?? process.platform;
const arch = values.arch ?? process.arch;
const builderOs = { linux: 'linux', darwin: 'mac', win32: 'win' }[platform];
if (!builderOs) stop(2, `--platform must be linux, darwin or win32, not "${platform}"`);
const { Arch, build } = require('electron-builder');
if (!(arch in Arch) || !Number.isNaN(Number(arch))) stop(2, `--arch must be one of ${Object.keys(Arch).filter((a) => Number.isNaN(Number(a))).join(', ')}, not "${arch}"`);
const electronDist = values['electron-dist'] && resolve(values['electron-dist']);
if (electronDist && !existsSync(electronDist)) stop(2, `--electron-dist names ${electronDist}, which does not exist; give Electron's zip for ${platform}-${arch} or the folder holding it.`);

const electronVersion = JSON.parse(readFileSync(join('node_modules', 'electron', 'package.json'), 'utf8')).version;
// electron-builder's own download functions, so the cache, the mirror settings and the checksums are the ones
// its packaging step uses (app-builder-lib out/util/electronGet.js).
const electronGet = require('app-builder-lib/out/util/electronGet.js');
// The cache `npm install electron` honours (electron_config_cache, electron's install.js) serves the
// installers too; electron-builder alone would always use @electron/get's default folder.
const electronCache = process.env.electron_config_cache || electronGet.defaultElectronGetCacheRoot();
const config = {
  // electron-builder.yml, with the update feed the release builder names put first (scripts/publishConfig.mjs).
  extends: 'scripts/publishConfig.mjs',
  ...(electronDist ? { electronDist } : {}),
  ...(process.env.electron_config_cache ? { electronDownload: { cache: process.env.electron_config_cache } } : {}),
};
const failedDownload = (err) =>
  downloadFailure(err, { electronVersion, platform, arch, electronCache, builderCache: electronGet.getCacheDirectory({ allowEnvVarOverride: true }), join });

step(process.execPath, ['node_modules/vite/bin/vite.js', 'build', '--logLevel', 'warn']);
step(process.execPath, ['scripts/build-app.mjs']);
if (!electronDist) {
  try {
    await electronGet.downloadElectronArtifactZip({
      electronDownload: { platform, arch, version: electronVersion, ...config.electronDownload },
      artifactName: 'electron',
      platformName: platform,
      arch,
      version: electronVersion,
    });
  } catch (err) {
    const message = failedDownload(err);
    stop(message ? 2 : 1, message ?? `Electron ${electronVersion} for ${platform}-${arch} could not be made ready: ${err.message}`);
  }
}
// Exits 2 itself, with its own message, when the driver cannot be downloaded.
step(process.execPath, ['scripts/electron-native.mjs', '--platform', platform, '--arch', arch]);
// npm installs only this machine's ffmpeg and ffprobe packages (each declares its os and cpu).
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
const binaries = ['@ffmpeg-installer', '@ffprobe-installer']
  .map((scope) => `${scope}/${platform}-${arch}`)
  .filter((name) => !existsSync(`node_modules/${name}/package.json`))
  .map((name) => `${name}@${lock.packages[`node_modules/${name}`]?.version ?? 'latest'}`);
if (binaries.length > 0) {
  const installed = npm(['install', '--no-save', '--force', '--no-audit', '--no-fund', ...binaries]);
  if (installed.status !== 0) {
    stop(2, `Could not download ${binaries.join(' and ')} from the npm registry (npm exited ${installed.status}). Connect to your registry, or point npm's registry setting at a mirror that has them, then run \`npm run dist\` again.`);
  }
}
try {
  await build({ [builderOs]: [], [arch]: true, publish: 'never', config });
} catch (err) {
  const message = failedDownload(err);
  if (message) stop(2, message);
  console.error(err);
  process.exit(1);
}
// Exit at once: electron-builder's download locks keep timers alive for a while after it returns.
process.exit(0);

function step(cmd, args) {
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

/** npm itself, so its registry, proxy and cache settings apply; Node spawns a .cmd only through a shell. */
function npm(args) {
  const cli = process.env.npm_execpath;
  const [cmd, ...pre] = cli && /npm-cli\.js$/.test(cli) ? [process.execPath, cli] : [process.platform === 'win32' ? 'npm.cmd' : 'npm'];
  return spawnSync(cmd, [...pre, ...args], { stdio: 'inherit', shell: cmd.endsWith('.cmd') });
}

function stop(code, message) {
  console.error(message);
  process.exit(code);
}
