import Database from 'better-sqlite3';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../main/simulator/server.ts';
import { hasChromium, serve, useBrowser } from '../helpers/browser.ts';
import { cli } from '../helpers/cli.ts';
import { writeSettings } from '../helpers/processes.ts';
import { tempDir } from '../helpers/tmp.ts';

const SHOTS = 'test-results/screenshots';
const browser = useBrowser();
beforeAll(() => mkdirSync(SHOTS, { recursive: true }));

const BOARD = { width: 320, height: 180, scenes: [{ id: 'dawn', imagePrompt: 'a fox in snow', motionPrompt: 'push in', duration: 1 }] };

const statusOf = (dataDir: string, id: number) => {
  const db = new Database(join(dataDir, 'studio.db'), { readonly: true });
  try {
    return (db.prepare(`SELECT status FROM tasks WHERE id = ?`).get(id) as { status: string }).status;
  } finally {
    db.close();
  }
};

describe.skipIf(!hasChromium)('a cancel question left open while the step is sent', () => {
  let sim: RunningSimulator;
  afterAll(async () => sim?.close());

  it('says the step is now sent and may be charged, and cancels nothing until asked again', async () => {
    // Long enough that the image is still being made when the page has opened its tasks, however slowly it starts.
    sim = await startSimulator({ jobMs: 6_000 });
    const dataDir = tempDir();
    writeSettings(dataDir, { engine: { tickMs: 50, leaseMs: 60_000, poll: { intervalMs: 100, maxIntervalMs: 200 } }, providers: { simulator: { baseUrl: sim.url } } });
    const file = join(dataDir, 'board.json');
    writeFileSync(file, JSON.stringify(BOARD));
    expect((await cli(dataDir, 'storyboard', 'create', 'Fox', '--file', file)).code).toBe(0);
    expect((await cli(dataDir, 'generate', 'Fox')).code).toBe(0);
    const { host, url } = await serve(dataDir);
    const page = await browser().newPage({ viewport: { width: 1280, height: 800 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(url);
    await page.locator('.projects').getByRole('button', { name: /^Fox/ }).click();
    await page.click('[data-tab=tasks]');

    // The clip waits for the image, so it is not sent yet when the question opens.
    const clipRow = page.locator('.task[data-status=PENDING]', { has: page.locator('.kind', { hasText: 'clip' }) });
    await clipRow.waitFor({ timeout: 10_000 });
    const clipId = Number((await clipRow.getAttribute('data-testid'))!.slice('task-'.length));
    await clipRow.getByRole('button', { name: 'Cancel' }).click();
    const ask = page.getByTestId('cancel-confirm');
    await ask.waitFor();
    expect(await ask.getByTestId('cancel-message').textContent()).toMatch(/^It has not been sent to simulator; nothing is charged for it\.$/);

    // The image is made and the clip sent while the question stays open.
    await expect.poll(() => statusOf(dataDir, clipId), { timeout: 20_000, interval: 100 }).toBe('SUBMITTED');
    await expect.poll(() => ask.getByTestId('cancel-message').textContent(), { timeout: 5_000 }).toMatch(/^It is already sent to simulator as request \S+; it may be charged/);
    expect(await ask.getByTestId('cancel-changed').textContent()).toMatch(/changed while the question was open/);
    expect(statusOf(dataDir, clipId)).toBe('SUBMITTED');
    await page.screenshot({ path: `${SHOTS}/cancel-changed.png` });

    // Asked again, with what it now means, the person may still cancel.
    await ask.getByRole('button', { name: 'Cancel the task' }).click();
    await ask.waitFor({ state: 'detached' });
    await expect.poll(() => statusOf(dataDir, clipId)).toBe('CANCELLED');
    expect(errors).toEqual([]);
    host.child.kill('SIGTERM');
    await host.exited;
  }, 90_000);
});
