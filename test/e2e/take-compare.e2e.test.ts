import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.ts';
import { hasChromium, openPage, shot, simulatedHost, storedStoryboard, useBrowser } from '../helpers/browser.ts';

const browser = useBrowser();

const BOARD = {
  width: 640,
  height: 360,
  fps: 12,
  scenes: [
    { id: 'dawn', imagePrompt: 'a red fox asleep in snow', motionPrompt: 'push in', narration: 'At dawn, the fox wakes.', duration: 1 },
    { id: 'home', imagePrompt: 'the fox trotting home', motionPrompt: 'track', duration: 1 },
  ],
};

const take = (page: Page, n: number): Locator => page.getByTestId(`take-dawn-${n}`);
const ready = async (page: Page, n: number) => expect.poll(() => take(page, n).getAttribute('data-state'), { timeout: 30_000, interval: 250 }).toBe('ready');

describe.skipIf(!hasChromium)('steering takes in Chromium, through the loopback host', () => {
  it('two variations of the clip only buy two clips and no still; compared side by side, "Use this take" picks one and buys nothing', async () => {
    const { sim, dataDir, host, url } = await simulatedHost(300, { name: 'Fox', storyboard: BOARD });
    const { page, errors } = await openPage(browser(), url, { width: 1400, height: 900 });

    // The scene's seed, set in the editor, is the one its Generate sends.
    await page.getByLabel('Seed of dawn').fill('7');
    await page.getByRole('button', { name: 'Save storyboard' }).click();
    await expect.poll(() => JSON.parse(storedStoryboard(dataDir, 'Fox')).scenes[0].seed).toBe(7);
    await expect.poll(() => page.getByTestId('estimate-total').textContent()).toMatch(/New steps: 0\.\d{2,6} USD/);
    await page.getByTestId('generate').click();
    await ready(page, 1);
    const first = '7';
    expect(await take(page, 1).locator('.take-seed').textContent()).toBe('seed 7');

    // Clip only, seed 42, two variations: one price for both, then two clips and no still bought.
    await page.getByLabel('What a new take of dawn makes again').selectOption('clip');
    await page.getByLabel('Seed of a new take of dawn').fill('42');
    await page.getByLabel('Variations of a new take of dawn').fill('2');
    await page.getByRole('button', { name: 'New take of dawn' }).click();
    const offer = page.getByRole('group', { name: 'New take of dawn' });
    await expect.poll(() => offer.textContent()).toMatch(/makes 2 new takes of dawn \(its clip again from the same still; nothing is bought for the still, seed 42\) and costs about 0\.60 USD, simulated/);
    const bought = sim.charges.length;
    await offer.getByRole('button', { name: 'Make it' }).click();
    await ready(page, 2);
    await ready(page, 3);
    expect(sim.charges.slice(bought).map((c) => c.kind)).toEqual(['clip', 'clip']);
    expect(await take(page, 2).getAttribute('aria-current')).toBe('true');
    expect(await take(page, 2).locator('.take-seed').textContent()).toBe(`image seed ${first} · clip seed 42`);
    expect(await take(page, 3).locator('.take-seed').textContent()).toBe(`image seed ${first} · clip seed 43`);

    // Side by side: each take's clip playing in the project's shape, with its seeds, cost and state.
    await page.getByRole('button', { name: 'Compare the takes of dawn' }).click();
    const compare = page.getByTestId('compare-dawn');
    for (const n of [1, 2, 3]) {
      const card = page.getByTestId(`compare-dawn-${n}`);
      await expect.poll(() => card.locator('video').getAttribute('data-shape'), { timeout: 15_000 }).toBe('640x360');
      expect(await card.textContent()).toMatch(/Take \d.*seed.*USD billed.*ready/);
    }
    const box = (await page.getByTestId('compare-dawn-1').locator('video').boundingBox())!;
    expect(box.width).toBeGreaterThan(380);
    expect(box.width / box.height).toBeCloseTo(16 / 9, 1);
    await page.waitForFunction(() => [...document.querySelectorAll('.compare-card video')].every((v) => (v as HTMLVideoElement).currentTime > 0));
    await shot(compare, 'takes-side-by-side');

    const before = sim.charges.length;
    await compare.getByRole('button', { name: 'Use take 3 of dawn' }).click();
    await expect.poll(() => page.getByTestId('compare-dawn-3').getAttribute('aria-current')).toBe('true');
    expect(await page.getByTestId('compare-dawn-2').getAttribute('aria-current')).toBeNull();
    const takes = JSON.parse((await cli(dataDir, 'takes', 'Fox', 'dawn', '--json')).out) as { take: number; picked: boolean; clipSeed: number }[];
    expect(takes.map((t) => [t.take, t.picked, t.clipSeed])).toEqual([[1, false, Number(first)], [2, false, 42], [3, true, 43]]);
    expect(JSON.parse(storedStoryboard(dataDir, 'Fox')).scenes[0]).toMatchObject({ take: 3, clipSeed: 43 });
    await compare.getByRole('button', { name: 'Close' }).click();
    expect(sim.charges).toHaveLength(before);
    expect(errors).toEqual([]);
    host.child.kill('SIGTERM');
    await host.exited;
  }, 120_000);
});
