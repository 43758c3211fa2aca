import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../main/simulator/server.ts';
import { CHROMIUM, hasChromium, serve, useBrowser, quickSimulatorSettings } from '../helpers/browser.ts';
import { tempDir } from '../helpers/tmp.ts';

const SHOTS = 'test-results/screenshots';
if (!hasChromium) console.warn(`browser tests skipped: no Chromium at ${CHROMIUM} (install chromium or set CHROMIUM_PATH)`);

const browser = useBrowser();
beforeAll(() => mkdirSync(SHOTS, { recursive: true }));

const shot = (page: Page, name: string) => page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });

describe.skipIf(!hasChromium)('the studio in Chromium, through the loopback host', () => {
  let sim: RunningSimulator;
  afterAll(async () => sim?.close());

  it('estimate, generate, progress, a crash mid-run, the decision it leaves, and the spend', async () => {
    sim = await startSimulator({ jobMs: 1_200 });
    const dataDir = tempDir();
    quickSimulatorSettings(dataDir, sim.url);
    // The host stops itself at the fourth paid request (the first clip), after marking it and before it leaves;
    // other requests may be inside their own send windows. (A request the provider has named by then is recorded
    // from the receipt journal at the next start, so it needs no decision.)
    const first = await serve(dataDir, { STUDIO_STOP_AT: 'after-mark:4' });
    const page = await browser().newPage({ viewport: { width: 1400, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(first.url);

    await page.getByLabel('New project name').fill('Fox film');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByLabel('Image prompt').fill('a red fox asleep in snow');
    await page.getByLabel('Narration').fill('At dawn, the fox wakes.');
    await page.getByRole('button', { name: 'Add scene' }).click();
    await page.getByLabel('Image prompt').nth(1).fill('the fox trotting home');
    await page.getByRole('button', { name: 'Save storyboard' }).click();
    const total = page.getByTestId('estimate-total');
    await expect.poll(async () => total.textContent()).toMatch(/New steps: 0\.\d{2,6} USD/);
    expect(await page.getByTestId('estimate').textContent()).toContain('catalogue:');
    await shot(page, '1-estimate');

    await page.getByTestId('generate').click();
    await page.click('[data-tab=tasks]');
    await page.locator('.task progress').first().waitFor();
    await shot(page, '2-progress');

    await first.host.waitFor(/stopped at after-mark/, 30_000);
    first.host.child.kill('SIGKILL');
    await first.host.exited;

    const second = await serve(dataDir, {});
    await page.goto(second.url);
    await page.locator('.unknown').first().waitFor();
    expect(await page.locator('.unknown').first().textContent()).toMatch(/may have accepted and charged it/);
    await shot(page, '3-decision');
    // Each task killed inside its send window: adopt what the provider has, send again what it never got.
    while ((await page.locator('.unknown').count()) > 0) {
      const unknown = page.locator('.unknown').first();
      await unknown.getByRole('button', { name: /Look for it at simulator/ }).click();
      await unknown.locator('.candidates, .note').first().waitFor();
      const adopt = unknown.getByRole('button', { name: 'Adopt' });
      await ((await adopt.count()) > 0 ? adopt.first() : unknown.getByRole('button', { name: 'Resubmit' })).click();
      await unknown.getByRole('button', { name: 'Confirm' }).click();
      await page.waitForTimeout(300);
    }
    await page.getByText('Nothing is waiting for you.').waitFor();
    await page.getByRole('button', { name: 'Close' }).click();

    await page.click('[data-tab=tasks]');
    await expect
      .poll(async () => page.locator('[data-status=SUCCEEDED]').count(), { timeout: 60_000, interval: 500 })
      .toBe(6);
    await shot(page, '4-done');
    await page.click('[data-tab=spend]');
    // The simulator's money is made up: shown apart from real money, and marked so.
    await expect.poll(async () => page.getByTestId('spend-simulated').textContent()).toMatch(/Billed \(simulated\)0\.(?!0+ )\d{2,6} USD/);
    await shot(page, '5-spend');
    await page.click('[data-tab=settings]');
    await page.getByText('Keys are stored as plain text').waitFor();
    await shot(page, '6-settings');

    const perTask = new Map<string, number>();
    for (const c of sim.charges) perTask.set(c.idempotencyKey!.replace(/-attempt-\d+$/, ''), (perTask.get(c.idempotencyKey!.replace(/-attempt-\d+$/, '')) ?? 0) + 1);
    expect([...perTask.values()].every((n) => n === 1)).toBe(true);
    expect(sim.charges).toHaveLength(5);
    expect(errors).toEqual([]);
    second.host.child.kill('SIGTERM');
    await second.host.exited;
  }, 120_000);
});
