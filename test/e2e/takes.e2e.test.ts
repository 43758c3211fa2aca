import Database from 'better-sqlite3';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { hasChromium, openPage, shot, simulatedHost, useBrowser } from '../helpers/browser.ts';

const browser = useBrowser();

const BOARD = {
  width: 320,
  height: 180,
  fps: 12,
  scenes: [
    { id: 'dawn', imagePrompt: 'a red fox asleep in snow', motionPrompt: 'push in', narration: 'At dawn, the fox wakes.', duration: 1 },
    { id: 'home', imagePrompt: 'the fox trotting home', motionPrompt: 'track', duration: 1 },
  ],
};

/** What the database says: the clip task of a take, and the newest render with the clips it used. */
function stored(dataDir: string) {
  const db = new Database(join(dataDir, 'studio.db'), { readonly: true });
  try {
    const clip = (scene: string, take: number) =>
      (db.prepare(`SELECT clip_task_id FROM takes WHERE scene = ? AND take = ?`).get(scene, take) as { clip_task_id: number }).clip_task_id;
    const render = db.prepare(`SELECT id, status, input_json FROM tasks WHERE kind = 'render' ORDER BY id DESC LIMIT 1`).get() as { id: number; status: string; input_json: string };
    const scenes = (JSON.parse(render.input_json) as { scenes: { id: string; clip: { $output: number } }[] }).scenes;
    return { dawn: [clip('dawn', 1), clip('dawn', 2)], home: clip('home', 2), render: { id: render.id, status: render.status, clips: scenes.map((s) => s.clip.$output) } };
  } finally {
    db.close();
  }
}

const take = (page: Page, scene: string, n: number): Locator => page.getByTestId(`take-${scene}-${n}`);

/** Asks for a new take of a scene, accepts what it costs, and waits until the new take is made and picked. */
async function newTake(page: Page, scene: string, n: number) {
  await page.getByRole('button', { name: `New take of ${scene}` }).click();
  const offer = page.getByRole('group', { name: `New take of ${scene}` });
  await expect.poll(() => offer.textContent()).toMatch(new RegExp(`makes a new take of ${scene} .* costs about 0\\.\\d{2,6} USD`));
  await offer.getByRole('button', { name: 'Make it' }).click();
  await expect.poll(() => take(page, scene, n).getAttribute('aria-current'), { timeout: 30_000 }).toBe('true');
  await expect.poll(() => take(page, scene, n).getAttribute('data-state'), { timeout: 30_000, interval: 250 }).toBe('ready');
  expect(await take(page, scene, n).textContent()).toMatch(/billed/);
  await take(page, scene, n).locator('img').waitFor();
}

describe.skipIf(!hasChromium)('takes in Chromium, through the loopback host', () => {
  it('a second take made in the UI keeps the first; picking the first buys nothing and the render uses it', async () => {
    const { sim, dataDir, host, url } = await simulatedHost(300, { name: 'Fox', storyboard: BOARD });
    const { page, errors } = await openPage(browser(), url, { width: 1280, height: 800 });

    await expect.poll(() => page.getByTestId('estimate-total').textContent()).toMatch(/New steps: 0\.\d{2,6} USD/);
    await page.getByTestId('generate').click();
    await expect.poll(() => take(page, 'dawn', 1).getAttribute('data-state'), { timeout: 30_000, interval: 250 }).toBe('ready');
    expect(await take(page, 'dawn', 1).textContent()).toMatch(/Take 1 · in the render.*billed/);
    await take(page, 'dawn', 1).locator('img').waitFor();

    // A second take of dawn: the first stays, with its own image and cost.
    await newTake(page, 'dawn', 2);
    expect(await take(page, 'dawn', 1).getAttribute('aria-current')).toBeNull();
    expect(await take(page, 'dawn', 1).textContent()).toMatch(/Take 1.*billed/);
    expect(await page.getByTestId('takes-dawn').getByRole('img').count()).toBe(2);
    // And one of home, so that dawn's take 1 with it is a render not made before.
    await newTake(page, 'home', 2);
    await page.getByTestId('takes-dawn').scrollIntoViewIfNeeded();
    await shot(page, 'takes');

    const bought = sim.charges.length;
    await page.getByRole('button', { name: 'Pick take 1 of dawn' }).click();
    await expect.poll(() => take(page, 'dawn', 1).getAttribute('aria-current')).toBe('true');
    expect(await take(page, 'dawn', 2).getByRole('button', { name: 'Pick take 2 of dawn' }).count()).toBe(1);

    const before = stored(dataDir).render.id;
    const generate = page.getByTestId('generate');
    await expect.poll(() => generate.isEnabled(), { timeout: 10_000 }).toBe(true);
    await generate.click();
    await page.click('[data-tab=tasks]');
    const render = page.locator('.task', { has: page.locator('.kind', { hasText: 'render' }) }).first();
    await expect.poll(() => render.getAttribute('data-testid')).not.toBe(`task-${before}`);
    await expect.poll(() => render.getAttribute('data-status'), { timeout: 30_000, interval: 250 }).toBe('SUCCEEDED');

    const { dawn, home, render: made } = stored(dataDir);
    expect(made.status).toBe('SUCCEEDED');
    expect(made.clips).toEqual([dawn[0], home]);
    expect(sim.charges).toHaveLength(bought);
    expect(errors).toEqual([]);
    host.child.kill('SIGTERM');
    await host.exited;
  }, 120_000);
});
