// `npm run dist [-- --platform linux|darwin|win32 --arch x64|arm64]`: the installers for one OS, by default
// this machine's. Builds the UI and the shell, the database driver for Electron's ABI (into its own folder),
// fetches that OS's ffmpeg and ffprobe packages when another OS is the target, then runs electron-builder.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { platform: { type: 'string' }, arch: { type: 'string' } } });
const platform = values.platform ?? process.platform;
const arch = values.arch ?? process.arch;
const builderOs = { linux: '--linux', darwin: '--mac', win32: '--win' }[platform];
if (!builderOs) {
  console.error(`--platform must be linux, darwin or win32, not "${platform}"`);
  process.exit(2);
}

const step = (cmd, args) => {
  const r = spawnSync(cmd, args, { stdio: 'inherit', shell: false });
  if (r.status !== 0) process.exit(r.status ?? 1);
};
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

step(process.execPath, ['node_modules/vite/bin/vite.js', 'build', '--logLevel', 'warn']);
step(process.execPath, ['scripts/build-app.mjs']);
step(process.execPath, ['scripts/electron-native.mjs', '--platform', platform, '--arch', arch]);
// npm installs only this machine's ffmpeg and ffprobe packages (each declares its os and cpu).
const binaries = ['@ffmpeg-installer', '@ffprobe-installer']
  .map((scope) => `${scope}/${platform}-${arch}`)
  .filter((name) => !existsSync(`node_modules/${name}/package.json`))
  .map((name) => `${name}@${JSON.parse(readFileSync('package-lock.json', 'utf8')).packages[`node_modules/${name}`]?.version ?? 'latest'}`);
if (binaries.length > 0) step(npm, ['install', '--no-save', '--force', '--no-audit', '--no-fund', ...binaries]);
step(process.execPath, ['node_modules/electron-builder/cli.js', builderOs, `--${arch}`, '--publish', 'never']);
