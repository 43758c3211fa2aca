import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startFake, type FakeServer } from './fakes/server.ts';
import { tempDir } from './helpers/tmp.ts';

// `npm run dist` where nothing can be downloaded: every mirror and registry is a 127.0.0.1 server answering 404,
// every cache an empty folder. It runs in a copy of the project (the sources linked, the build output its own),
// so the checkout's dist/ is never touched.
const ROOT = join(import.meta.dirname, '..');
const require = createRequire(join(ROOT, 'package.json'));
const ELECTRON = JSON.parse(readFileSync(join(ROOT, 'node_modules', 'electron', 'package.json'), 'utf8')).version as string;
const ZIP = `electron-v${ELECTRON}-${process.platform}-${process.arch}.zip`;
/** scripts/downloadFailure.mjs, plain JavaScript as the scripts are, imported by its address to type it here. */
const { downloadFailure } = (await import(new URL('../scripts/downloadFailure.mjs', import.meta.url).href)) as {
  downloadFailure: (err: unknown, at: Record<string, unknown>) => string | null;
};

function project(): string {
  const dir = tempDir();
  for (const file of ['package.json', 'package-lock.json', 'electron-builder.yml', 'vite.config.ts', 'tsconfig.json']) copyFileSync(join(ROOT, file), join(dir, file));
  // Copied, since Vite writes the UI beside the real folder of its root.
  cpSync(join(ROOT, 'renderer'), join(dir, 'renderer'), { recursive: true });
  for (const linked of ['node_modules', 'scripts', 'app', 'main', 'migrations', 'resources']) symlinkSync(join(ROOT, linked), join(dir, linked), 'junction');
  return dir;
}

function offline(server: FakeServer, cache: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    ELECTRON_MIRROR: `${server.url}/electron/`,
    ELECTRON_BUILDER_BINARIES_MIRROR: `${server.url}/tools/`,
    npm_config_registry: `${server.url}/npm/`,
    npm_config_cache: join(cache, 'npm'),
    electron_config_cache: join(cache, 'electron'),
    ELECTRON_BUILDER_CACHE: join(cache, 'electron-builder'),
    XDG_CACHE_HOME: cache,
    NO_PROXY: '127.0.0.1',
    no_proxy: '127.0.0.1',
  };
}

function dist(cwd: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['scripts/dist.mjs', ...args], { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stderr })));
}

/** What a run that stopped for a download must not print: a stack, or node-gyp's advice. */
function expectNoNoise(stderr: string): void {
  expect(stderr).not.toMatch(/^\s+at /m);
  expect(stderr).not.toMatch(/gyp/i);
}

describe('npm run dist without the network', () => {
  it("names Electron's zip and how to supply it, and stops with 2 before building anything slow", async () => {
    const server = await startFake(() => undefined);
    const dir = project();
    const cache = tempDir();
    const { code, stderr } = await dist(dir, [], offline(server, cache));
    expect(code).toBe(2);
    expect(server.seen.map((r) => r.path)).toContain(`/electron/v${ELECTRON}/${ZIP}`);
    // @electron/get keeps a file under the SHA-256 of the address of its folder (src/Cache.ts getCacheDirectory).
    const folder = createHash('sha256').update(`${server.url}/electron/v${ELECTRON}`).digest('hex');
    expect(stderr).toContain(`Could not download Electron ${ELECTRON} for ${process.platform}-${process.arch}: ${server.url}/electron/v${ELECTRON}/${ZIP} answered HTTP 404.`);
    expect(stderr).toContain(`npm run dist -- --electron-dist <${ZIP}, or a folder holding it>`);
    expect(stderr).toContain(`ELECTRON_MIRROR=<a mirror holding v${ELECTRON}/${ZIP}>`);
    expect(stderr).toContain(`put ${ZIP} in ${join(cache, 'electron', folder)} and Electron's SHASUMS256.txt for ${ELECTRON} at ${join(cache, 'electron', `SHASUMS256.txt-${ELECTRON}`)}`);
    expectNoNoise(stderr);
    expect(existsSync(join(dir, 'dist', 'native'))).toBe(false);
  }, 90_000);

  it("passes on the database driver's own message and exit code 2 when Electron is given but the driver cannot be had", async () => {
    const server = await startFake(() => undefined);
    const dir = project();
    const electron = join(tempDir(), ZIP);
    writeFileSync(electron, 'not fetched: given');
    const { code, stderr } = await dist(dir, ['--electron-dist', electron], offline(server, tempDir()));
    expect(code).toBe(2);
    expect(server.seen.some((r) => r.path.startsWith('/electron/'))).toBe(false);
    expect(server.seen.some((r) => r.path.startsWith('/npm/better-sqlite3'))).toBe(true);
    expect(stderr).toMatch(/Could not download better-sqlite3@\S+, the desktop app's database driver/);
    expectNoNoise(stderr);
  }, 90_000);

  it("names electron-builder's tool, the mirror setting and the cache file, for the downloads of both of its kinds", async () => {
    const server = await startFake(() => undefined);
    const cache = tempDir();
    const saved = { ...process.env };
    Object.assign(process.env, { ELECTRON_BUILDER_BINARIES_MIRROR: `${server.url}/tools/`, ELECTRON_BUILDER_CACHE: cache, NO_PROXY: '127.0.0.1', no_proxy: '127.0.0.1' });
    const { Arch } = require('electron-builder');
    const { getAppImageTools, getFpmPath } = require('app-builder-lib/out/toolsets/linux.js');
    const at = { electronVersion: ELECTRON, platform: 'linux', arch: 'x64', electronCache: '/electron-cache', builderCache: cache, join };
    try {
      // AppImage's runtime (downloadBuilderToolset), then fpm (getBinFromUrl), as the Linux targets ask for them.
      const appImage = await getAppImageTools('1.0.3', Arch.x64).catch((err: unknown) => err);
      expect(downloadFailure(appImage, at)).toBe(
        [
          `Could not download electron-builder's tool appimage@1.0.3 (appimage-tools-runtime-20251108.tar.gz): ${server.url}/tools/appimage@1.0.3/appimage-tools-runtime-20251108.tar.gz answered HTTP 404.`,
          'Supply it in one of these ways, then run `npm run dist` again:',
          "  - ELECTRON_BUILDER_BINARIES_MIRROR=<a mirror of electron-builder-binaries' releases holding appimage@1.0.3/appimage-tools-runtime-20251108.tar.gz>",
          `  - put appimage-tools-runtime-20251108.tar.gz at ${join(cache, 'appimage@1.0.3', 'appimage-tools-runtime-20251108.tar.gz')} (electron-builder's cache; ELECTRON_BUILDER_CACHE moves it)`,
        ].join('\n'),
      );
      if (process.platform !== 'win32') {
        const fpm = await getFpmPath().catch((err: unknown) => err);
        expect(downloadFailure(fpm, at)).toMatch(new RegExp(`^Could not download electron-builder's tool fpm@2\\.1\\.4 \\(fpm-\\S+\\.7z\\): ${server.url}/tools/fpm@2\\.1\\.4/fpm-\\S+\\.7z answered HTTP 404\\.\n`));
      }
    } finally {
      for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
      Object.assign(process.env, saved);
    }
    // A closed port is a download that failed too; an error of another kind is no download's.
    expect(downloadFailure(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED', options: { url: new URL(`http://127.0.0.1:9/electron/v${ELECTRON}/${ZIP}`) } }), at)).toMatch(
      new RegExp(`^Could not download Electron ${ELECTRON.replace(/\./g, '\\.')} for linux-x64: http://127\\.0\\.0\\.1:9/\\S+ answered ECONNREFUSED\\.`),
    );
    expect(downloadFailure(new Error('Cannot read properties of undefined'), at)).toBeNull();
  }, 30_000);
});
