import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../main/simulator/server.ts';
import { CHROMIUM, hasChromium, serve, useBrowser } from '../helpers/browser.ts';
import { cli } from '../helpers/cli.ts';
import { writeSettings } from '../helpers/processes.ts';
import { tempDir } from '../helpers/tmp.ts';

const SHOTS = 'test-results/screenshots';
if (!hasChromium) console.warn(`browser tests skipped: no Chromium at ${CHROMIUM} (install chromium or set CHROMIUM_PATH)`);

const browser = useBrowser();
beforeAll(() => mkdirSync(SHOTS, { recursive: true }));

const shot = (page: Page, name: string) => page.screenshot({ path: `${SHOTS}/${name}.png` });

const board = (prompt: string, narration: string) => ({
  width: 320,
  height: 180,
  scenes: [{ id: 'dawn', imagePrompt: prompt, motionPrompt: 'push in', narration, duration: 1 }],
});

async function makeProject(dir: string, name: string, b: object, work = true) {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(b));
  expect((await cli(dir, 'storyboard', 'create', name, '--file', file)).code).toBe(0);
  expect((await cli(dir, 'generate', name)).code).toBe(0);
  if (work) expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
}

describe.skipIf(!hasChromium)('the library, task detail, cancel and spend across projects, in Chromium', () => {
  let sim: RunningSimulator;
  afterAll(async () => sim?.close());

  it('lists, filters, searches and deletes outputs of two projects; opens a task; asks before a cancel; sums every project', async () => {
    sim = await startSimulator({ jobMs: 50 });
    const dataDir = tempDir();
    writeSettings(dataDir, { engine: { tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 100 } }, providers: { simulator: { baseUrl: sim.url } } });
    await makeProject(dataDir, 'Fox', board('a red fox asleep in snow', 'At dawn, the fox wakes.'));
    await makeProject(dataDir, 'Owl', board('an owl on a pine branch', 'The owl watches.'));

    const { host, url } = await serve(dataDir);
    const page = await browser().newPage({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(url);

    // The library: every output of both projects.
    await page.getByRole('button', { name: 'Library', exact: true }).click();
    const count = page.getByTestId('library-count');
    await expect.poll(() => count.textContent()).toBe('8 results');
    const list = page.getByTestId('library-list');
    expect(await list.getByText(/· Fox/).count()).toBe(4);
    expect(await list.getByText(/· Owl/).count()).toBe(4);
    expect(await list.locator('img').count()).toBe(2);
    expect(await list.locator('audio[controls]').count()).toBe(2);
    expect(await list.locator('video[controls]').count()).toBe(4);
    await list.locator('img').first().evaluate((img: HTMLImageElement) => img.decode());
    await shot(page, 'library');

    // Filters and search.
    await page.getByLabel('Project', { exact: true }).selectOption('Owl');
    await expect.poll(() => count.textContent()).toBe('4 results');
    await page.getByLabel('Kind', { exact: true }).selectOption('image');
    await expect.poll(() => count.textContent()).toBe('1 result');
    expect(await list.textContent()).toContain('an owl on a pine branch');
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await expect.poll(() => count.textContent()).toBe('8 results');
    await page.getByLabel('Search prompts', { exact: true }).fill('fox wakes');
    await expect.poll(() => count.textContent()).toBe('1 result');
    expect(await list.textContent()).toContain('At dawn, the fox wakes.');
    await page.getByLabel('Provider', { exact: true }).selectOption('local');
    await expect.poll(() => count.textContent()).toBe('0 results');
    await page.getByRole('button', { name: 'Clear filters' }).click();

    // Delete the Fox narration: the confirmation names what it cost, and that it is not refunded.
    await page.getByLabel('Project', { exact: true }).selectOption('Fox');
    await page.getByLabel('Kind', { exact: true }).selectOption('speech');
    await expect.poll(() => count.textContent()).toBe('1 result');
    await list.getByRole('button', { name: /^Delete the narration of task \d+$/ }).click();
    const confirm = page.getByRole('dialog', { name: /Delete the narration/ });
    await confirm.waitFor();
    const warning = await confirm.getByTestId('delete-warning').textContent();
    expect(warning).toMatch(/^This narration cost 0\.\d+ USD \(billed\); deleting it does not refund it\.$/);
    // Focus starts on the safe choice.
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Keep it');
    await shot(page, 'library-delete-confirm');
    await confirm.getByRole('button', { name: 'Delete', exact: true }).click();
    await confirm.waitFor({ state: 'detached' });
    await list.getByText(/^deleted .*; still counted in the spend$/).waitFor();
    expect(await list.locator('audio').count()).toBe(0);

    // The video (made here, at no charge) goes too, so the narration must be had again to render.
    await page.getByLabel('Kind', { exact: true }).selectOption('render');
    await list.getByRole('button', { name: /^Delete the video of task \d+$/ }).click();
    const free = page.getByRole('dialog', { name: /Delete the video/ });
    expect(await free.getByTestId('delete-warning').textContent()).toMatch(/^This video cost nothing \(.+\); deleting it removes the file\.$/);
    await free.getByRole('button', { name: 'Delete', exact: true }).click();
    await free.waitFor({ state: 'detached' });

    // The estimate says the narration was paid for and its result is lost.
    await page.locator('.projects').getByRole('button', { name: /^Fox/ }).click();
    await page.getByRole('button', { name: 'Storyboard', exact: true }).click();
    const lost = page.getByTestId('estimate-lost');
    await lost.waitFor();
    expect(await lost.textContent()).toMatch(/Paid for, result lost.*dawn:speech: paid 0\.\d{2,6} USD \(task \d+\), result\s+lost/);

    // Task detail from the task board: history, request id, money and where each figure comes from.
    await page.getByRole('button', { name: 'Tasks', exact: true }).click();
    const clipRow = page.locator('.task', { has: page.locator('.kind', { hasText: 'clip' }) });
    const details = clipRow.getByRole('button', { name: /^Details of task \d+$/ });
    await details.click();
    const detail = page.getByTestId('task-detail');
    await detail.waitFor();
    expect(await page.evaluate(() => !!document.activeElement?.closest('[role=dialog]'))).toBe(true);
    expect(await detail.getByTestId('detail-history').textContent()).toMatch(/enqueued.*claimed.*provider accepted the request.*output saved/);
    expect(await detail.getByTestId('detail-request-id').textContent()).toMatch(/^[0-9a-f-]{36}$/);
    const moneyFacts = await detail.getByTestId('detail-money').textContent();
    expect(moneyFacts).toContain('the simulator\'s "cost" field');
    expect(moneyFacts).toMatch(/Estimated0\.\d{2,6} USD .+Billed0\.\d{2,6} USD/);
    expect(await detail.textContent()).toContain('"prompt": "push in"');
    await detail.locator('video').first().waitFor();
    await shot(page, 'task-detail');
    await page.keyboard.press('Escape');
    await detail.waitFor({ state: 'detached' });
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toMatch(/^Details of task \d+$/);

    // A third project whose image and narration stay at the provider: cancelling the image asks first.
    sim.setFaults({ job: ['never-finish', 'never-finish'] });
    await makeProject(dataDir, 'Heron', board('a heron in the reeds', 'The heron waits.'), false);
    await page.locator('.projects').getByRole('button', { name: /^Heron/ }).click();
    const imageRow = page.locator('.task[data-status=SUBMITTED]', { has: page.locator('.kind', { hasText: 'image' }) });
    await imageRow.waitFor({ timeout: 20_000 });
    await imageRow.getByRole('button', { name: 'Cancel' }).click();
    const ask = page.getByTestId('cancel-confirm');
    await ask.waitFor();
    expect(await ask.getByTestId('cancel-message').textContent()).toMatch(
      /^It is already sent to simulator as request [0-9a-f-]{36}; it may be charged \(about 0\.\d{2,6} USD\)\. The studio asks simulator to stop it/,
    );
    const dependents = await ask.getByTestId('cancel-dependents').locator('li').allTextContents();
    expect(dependents).toHaveLength(2);
    expect(dependents[0]).toMatch(/^clip \(task \d+\): push in$/);
    expect(dependents[1]).toMatch(/^video \(task \d+\): render of 1 scene\(s\)$/);
    await shot(page, 'cancel-confirm');
    await ask.getByRole('button', { name: 'Cancel the task' }).click();
    await ask.waitFor({ state: 'detached' });
    await expect.poll(() => page.locator('.task[data-status=CANCELLED]').count()).toBe(3);

    // Spend across projects: every project, per model, billed against estimated, and a CSV of all.
    await page.getByRole('button', { name: 'Spend', exact: true }).click();
    const projects = page.getByTestId('spend-projects');
    await projects.waitFor();
    const rows = await projects.locator('tbody tr td:first-child').allTextContents();
    expect(rows).toEqual(['Fox', 'Owl', 'Heron']);
    const models = await page.getByTestId('spend-models-all').locator('tbody tr').allTextContents();
    expect(models.map((m) => m.split(/\d/)[0])).toEqual(['simulator sim-clip-', 'simulator sim-image-', 'simulator sim-speech-']);
    expect(models.every((m) => /%|as estimated/.test(m))).toBe(true);
    expect(await page.locator('svg[aria-label="Spend per provider over every project"] text.value').first().textContent()).toMatch(/^\d+\.\d{2,6} USD simulated, never charged$/);
    await shot(page, 'spend-all');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV of all projects' }).click()]);
    expect(download.suggestedFilename()).toBe('all projects spend.csv');
    const csv = readFileSync((await download.path())!, 'utf8').trim().split('\n');
    expect(csv[0]).toBe('project,day,provider,billed,counted_from_usage,estimated,possibly_charged,currency,simulated');
    expect(csv.slice(1).map((l) => l.split(',')[0])).toEqual(['Fox', 'Heron', 'Owl']);

    expect(errors).toEqual([]);
    host.child.kill('SIGTERM');
    await host.exited;
  }, 180_000);
});
