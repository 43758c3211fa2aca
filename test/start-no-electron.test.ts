import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers/tmp.ts';
import { until } from './helpers/wait.ts';

/**
 * `npm start` where Electron cannot be downloaded: one line says so, the failure is remembered so the next start
 * does not try again (until --retry-electron), and the browser studio opens. Electron's own install script runs,
 * pointed at a mirror on 127.0.0.1 that has nothing (ELECTRON_MIRROR, read by @electron/get's artifact-utils.js)
 * and an empty download cache (electron_config_cache, read by electron's install.js), so it fails at once.
 */

const ROOT = join(import.meta.dirname, '..');
const ELECTRON_VERSION = JSON.parse(readFileSync(join(ROOT, 'node_modules', 'electron', 'package.json'), 'utf8')).version;

let mirror: ReturnType<typeof createServer>;
let mirrorUrl = '';
const asked: string[] = [];
beforeAll(async () => {
  mirror = createServer((req, res) => {
    asked.push(req.url ?? '');
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => mirror.listen(0, '127.0.0.1', resolve));
  mirrorUrl = `http://127.0.0.1:${(mirror.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise((resolve) => mirror.close(resolve)));

/** `node scripts/start.mjs ARGS` until the browser studio says where it is, then stopped; what it printed. */
async function start(cacheDir: string, args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, CACHE_DIR: cacheDir, STUDIO_DATA_DIR: tempDir(), STUDIO_SIMULATOR_BASE_URL: 'http://127.0.0.1:9' };
  // The mirror is read from npm's configuration first, so any set there is replaced too.
  for (const key of Object.keys(env)) if (/^(npm_config_electron_|npm_package_config_electron_|electron_)/i.test(key) || key === 'ELECTRON_SKIP_BINARY_DOWNLOAD') delete env[key];
  Object.assign(env, { ELECTRON_MIRROR: mirrorUrl, electron_config_cache: tempDir() });
  const child = spawn(process.execPath, ['scripts/start.mjs', ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  try {
    await until(() => /Open http:\/\/127\.0\.0\.1:\d+/.test(out) || child.exitCode !== null, 90_000);
  } finally {
    child.kill('SIGTERM');
  }
  await exited;
  expect(out, err).toMatch(/Studio running\. Open http:\/\/127\.0\.0\.1:\d+/);
  // What start.mjs itself said, before the studio's own lines.
  const said = out.slice(0, out.indexOf('Studio running')).trim().split('\n');
  return { said, err };
}

describe('npm start without a downloadable Electron', () => {
  it('says so in one line, remembers it, opens the browser studio, and tries again only when asked', async () => {
    const cache = tempDir();
    const marker = join(cache, 'take-studio', 'electron-download-failed.json');

    const first = await start(cache, ['--port', '0', '--no-open']);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain(`electron-v${ELECTRON_VERSION}-`);
    expect(first.said).toEqual([
      'Fetching the Electron binary for the desktop app (once)…',
      "The desktop app's Electron could not be downloaded here, so the studio opens in your browser; `npm start -- --retry-electron` tries again (`--verbose` shows why).",
    ]);
    // The download's own failure (a stack) is not shown, only kept.
    expect(first.err).not.toMatch(/HTTPError|RequestError|^\s+at /m);
    expect(JSON.parse(readFileSync(marker, 'utf8'))).toMatchObject({ version: ELECTRON_VERSION, output: expect.stringMatching(/HTTPError.*404/) });

    const second = await start(cache, ['--port', '0', '--verbose', '--no-open']);
    expect(asked).toHaveLength(1);
    expect(second.said).toEqual(["The desktop app's Electron could not be downloaded here last time, so the studio opens in your browser; `npm start -- --retry-electron` tries again."]);
    // Asked for, the kept reason is shown; the flag is start.mjs's own, not passed on to the studio.
    expect(second.err).toMatch(/HTTPError.*404/);

    const third = await start(cache, ['--retry-electron', '--port', '0', '--no-open']);
    expect(asked).toHaveLength(2);
    expect(third.said.at(-1)).toMatch(/^The desktop app's Electron could not be downloaded here, so the studio opens in your browser/);
    expect(existsSync(marker)).toBe(true);
  }, 240_000);
});
