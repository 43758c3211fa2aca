import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../main/simulator/server.ts';
import { axe, serious, type Finding } from '../helpers/axe.ts';
import { CHROMIUM, hasChromium, serve, useBrowser, quickSimulatorSettings } from '../helpers/browser.ts';
import { tempDir } from '../helpers/tmp.ts';

const SHOTS = 'test-results/screenshots';
if (!hasChromium) console.warn(`browser tests skipped: no Chromium at ${CHROMIUM} (install chromium or set CHROMIUM_PATH)`);

const browser = useBrowser();
beforeAll(() => mkdirSync(SHOTS, { recursive: true }));

describe.skipIf(!hasChromium)('accessibility, in Chromium', () => {
  let sim: RunningSimulator;
  afterAll(async () => sim?.close());

  it('axe-core finds no serious or critical violation in any view or in the decisions dialog; the dialog keeps the keyboard', async () => {
    sim = await startSimulator({ jobMs: 300 });
    const dataDir = tempDir();
    quickSimulatorSettings(dataDir, sim.url);
    // The first paid request is marked sent and the host stops before it leaves: the next start has a decision for the person.
    const first = await serve(dataDir, { STUDIO_STOP_AT: 'after-mark:1' });
    const page = await browser().newPage({ viewport: { width: 1280, height: 800 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(first.url);
    await page.getByLabel('New project name').fill('Fox film');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByLabel('Image prompt', { exact: true }).fill('a red fox asleep in snow');
    await page.getByLabel('Narration', { exact: true }).fill('At dawn, the fox wakes.');
    await page.getByRole('button', { name: 'Save storyboard' }).click();
    await expect.poll(async () => page.getByTestId('estimate-total').textContent()).toMatch(/New steps: 0\.\d{2,6} USD/);
    await page.getByTestId('generate').click();
    await first.host.waitFor(/stopped at after-mark/, 30_000);
    first.host.child.kill('SIGKILL');
    await first.host.exited;

    const second = await serve(dataDir);
    await page.goto(second.url);
    const dialog = page.getByRole('dialog', { name: 'Needs your decision' });
    await dialog.locator('.unknown').first().waitFor();
    const counts: Record<string, { all: number; serious: number; rules: string[] }> = {};
    const found: Record<string, Finding[]> = {};
    const check = async (view: string) => {
      const findings = await axe(page);
      counts[view] = { all: findings.length, serious: serious(findings).length, rules: findings.map((f) => `${f.id} (${f.impact})`) };
      if (serious(findings).length) found[view] = serious(findings);
    };
    await check('decisions dialog');
    await page.screenshot({ path: `${SHOTS}/decisions-dialog.png` });

    // Focus starts inside, Tab and Shift+Tab go round inside, Escape closes.
    const inDialog = () => page.evaluate(() => !!document.activeElement?.closest('[role=dialog]'));
    expect(await inDialog()).toBe(true);
    for (let i = 0; i < 25; i++) {
      await page.keyboard.press('Tab');
      expect(await inDialog()).toBe(true);
    }
    for (let i = 0; i < 5; i++) {
      await page.keyboard.press('Shift+Tab');
      expect(await inDialog()).toBe(true);
    }
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
    expect(outline).toBe('solid');

    // A confirmation inside it takes the keyboard in turn: Escape closes only the confirmation.
    await dialog.getByRole('button', { name: 'Resubmit' }).first().click();
    const confirm = page.getByRole('dialog', { name: /Send it again/ });
    await confirm.waitFor();
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    await check('decisions dialog, confirmation');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => !!document.activeElement?.closest('.confirm'))).toBe(true);
    await page.keyboard.press('Escape');
    await confirm.waitFor({ state: 'detached' });
    expect(await dialog.count()).toBe(1);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });

    // Every tab, reached and opened by keyboard.
    const tabs = await page.locator('nav [data-tab]').evaluateAll((els) => els.map((e) => e.getAttribute('data-tab')!));
    expect(tabs).toEqual(expect.arrayContaining(['storyboard', 'tasks', 'spend', 'settings']));
    for (const tab of tabs) {
      await page.locator(`[data-tab=${tab}]`).focus();
      await page.keyboard.press('Enter');
      await expect.poll(() => page.locator(`[data-tab=${tab}]`).getAttribute('class')).toMatch(/active/);
      await page.waitForTimeout(500);
      await check(tab);
    }
    expect(found).toEqual({});
    console.log(`axe-core ${JSON.parse(readFileSync(createRequire(import.meta.url).resolve('axe-core/package.json'), 'utf8')).version}, violations per view: ${JSON.stringify(counts)}`);
    expect(errors).toEqual([]);
    second.host.child.kill('SIGTERM');
    await second.host.exited;
  }, 120_000);
});
