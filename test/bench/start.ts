import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { openStudio } from '../../main/studio.ts';
import { CHROMIUM, CHROMIUM_ARGS } from '../helpers/browser.ts';

const STAMP = 'dist/renderer/build-stamp.json';

/** One `npm start` (the browser host) until the page shows the data folder's project; then it is stopped. */
async function once(dataDir: string, page: import('playwright-core').Page): Promise<number> {
  const start = performance.now();
  const npm = spawn(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['start', '--silent', '--', '--no-open'], {
    env: { ...process.env, STUDIO_DATA_DIR: dataDir, STUDIO_BROWSER: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so it can be stopped as Ctrl+C in a terminal stops it.
    detached: true,
  });
  // Once every process of the group has let go of the output.
  const exited = new Promise<void>((resolve) => npm.once('close', () => resolve()));
  let out = '';
  let err = '';
  npm.stderr.on('data', (d) => (err += d));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      npm.stdout.on('data', (d) => {
        out += d;
        const found = /Open (\S+)/.exec(out)?.[1];
        if (found) resolve(found);
      });
      void exited.then(() => reject(new Error(`npm start ended before printing an address:\n${out}\n${err}`)));
    });
    await page.goto(url);
    // Usable: the page is drawn and the studio has answered it (the project list comes from the API).
    await page.getByRole('button', { name: /Bench/ }).waitFor({ timeout: 10_000 });
    return performance.now() - start;
  } finally {
    process.kill(-npm.pid!, 'SIGINT');
    await exited;
  }
}

/** From `npm start` (the UI built already) to a usable page in a browser that is already open; median of 3 after one warm-up. */
export async function benchStart() {
  const dir = mkdtempSync(join(tmpdir(), 'studio-bench-start-'));
  const studio = await openStudio(dir);
  await studio.projects.ensure('Bench', Date.now());
  await studio.close();
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const times: number[] = [];
  let stampBefore = 0;
  try {
    for (let round = 0; round < 4; round++) {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      const ms = await once(dir, page);
      await page.close();
      // The first round builds the UI if it was not built from the sources as they are.
      if (round === 0) stampBefore = statSync(STAMP).mtimeMs;
      else times.push(ms);
    }
  } finally {
    await browser.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return { startMs: Math.round([...times].sort((a, b) => a - b)[1]!), rebuilt: statSync(STAMP).mtimeMs !== stampBefore };
}
