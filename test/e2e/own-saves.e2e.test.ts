import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.ts';
import { hasChromium, openPage, shot, simulatedHost, storedStoryboard, useBrowser } from '../helpers/browser.ts';

const browser = useBrowser();

const BOARD = {
  width: 640,
  height: 360,
  fps: 12,
  scenes: [
    { id: 'dawn', imagePrompt: 'a red fox asleep in snow', motionPrompt: 'push in', duration: 1 },
    { id: 'home', imagePrompt: 'the fox trotting home', motionPrompt: 'track', duration: 1 },
  ],
};

const ready = (page: Page, n: number) =>
  expect.poll(() => page.getByTestId(`take-dawn-${n}`).getAttribute('data-state'), { timeout: 30_000, interval: 250 }).toBe('ready');
const stored = (dataDir: string) => JSON.parse(storedStoryboard(dataDir, 'Fox')) as { scenes: Record<string, unknown>[] };

describe.skipIf(!hasChromium)("the tab's own saves, in Chromium through the loopback host", () => {
  it('a pick in the strip or the compare dialog, and "Use in scene", update the editor at once, keeping what was typed; simulated spend is drawn as simulated; a seed shows its 10 digits', async () => {
    const { dataDir, host, url } = await simulatedHost(200, { name: 'Fox', storyboard: BOARD });
    const { page, errors } = await openPage(browser(), url, { width: 1400, height: 900 });

    await page.getByTestId('generate').click();
    await ready(page, 1);
    await page.getByLabel('What a new take of dawn makes again').selectOption('clip');
    await page.getByRole('button', { name: 'New take of dawn' }).click();
    await page.getByRole('group', { name: 'New take of dawn' }).getByRole('button', { name: 'Make it' }).click();
    await ready(page, 2);
    await expect.poll(() => stored(dataDir).scenes[0]!.take).toBe(2);

    // Typed and not saved, then a pick in the strip: the pick's save is this tab's own, so no "saved elsewhere".
    await page.getByLabel('Image prompt').nth(1).fill('the fox trotting home at dusk');
    await page.getByRole('button', { name: 'Pick take 1 of dawn' }).click();
    await expect.poll(() => stored(dataDir).scenes[0]!.take).toBe(1);
    await expect.poll(() => page.getByTestId('take-dawn-1').getAttribute('aria-current')).toBe('true');
    await page.waitForTimeout(1500);
    expect(await page.getByTestId('saved-elsewhere').count()).toBe(0);
    expect(await page.getByLabel('Image prompt').nth(1).inputValue()).toBe('the fox trotting home at dusk');
    await page.getByRole('button', { name: 'Save storyboard' }).click();
    await expect.poll(() => stored(dataDir).scenes[1]!.imagePrompt).toBe('the fox trotting home at dusk');
    expect(stored(dataDir).scenes[0]).toMatchObject({ take: 1 });
    expect(await page.getByTestId('storyboard-conflict').count()).toBe(0);
    expect(await page.locator('[role=alert]').count()).toBe(0);

    // The same through the compare dialog, then an edit right after it: saved without a conflict.
    await page.getByLabel('Narration').nth(0).fill('At dawn, the fox wakes.');
    await page.getByRole('button', { name: 'Compare the takes of dawn' }).click();
    const compare = page.getByTestId('compare-dawn');
    await compare.getByRole('button', { name: 'Use take 2 of dawn' }).click();
    await expect.poll(() => page.getByTestId('compare-dawn-2').getAttribute('aria-current')).toBe('true');
    await compare.getByRole('button', { name: 'Close' }).click();
    await expect.poll(() => stored(dataDir).scenes[0]!.take).toBe(2);
    await page.getByLabel('Motion prompt').nth(1).fill('track, low');
    await page.getByRole('button', { name: 'Save storyboard' }).click();
    await expect.poll(() => stored(dataDir).scenes[1]!.motionPrompt).toBe('track, low');
    expect(stored(dataDir).scenes[0]).toMatchObject({ take: 2, narration: 'At dawn, the fox wakes.' });
    expect(await page.getByTestId('storyboard-conflict').count()).toBe(0);
    await shot(page.getByTestId('scene-0'), 'own-save-after-pick');

    // "Use in scene" in the library, with an edit unsaved in the storyboard: back there, both are on screen.
    await page.getByLabel('Narration').nth(1).fill('Home before dark.');
    const tasks = JSON.parse((await cli(dataDir, 'tasks', '--json')).out) as { id: number; kind: string }[];
    const image = tasks.find((t) => t.kind === 'image')!;
    await page.getByRole('button', { name: 'Library', exact: true }).click();
    await page.getByRole('button', { name: `Use the image of task ${image.id} in a scene` }).click();
    await page.getByTestId('use-in-scene').getByLabel('Scene to use it in').selectOption('dawn');
    await page.getByTestId('use-in-scene').getByRole('button', { name: 'Use in scene dawn' }).click();
    await expect.poll(() => stored(dataDir).scenes[0]!.image).toEqual({ task: image.id });
    await page.getByRole('button', { name: 'Storyboard', exact: true }).click();
    expect(await page.getByLabel('Narration').nth(1).inputValue()).toBe('Home before dark.');
    await page.waitForTimeout(1500);
    expect(await page.getByTestId('saved-elsewhere').count()).toBe(0);
    await page.getByRole('button', { name: 'Save storyboard' }).click();
    await expect.poll(() => stored(dataDir).scenes[1]!.narration).toBe('Home before dark.');
    expect(stored(dataDir).scenes[0]!.image).toEqual({ task: image.id });
    expect(await page.getByTestId('storyboard-conflict').count()).toBe(0);

    // A seed of 10 digits is seen whole in both seed fields.
    for (const label of ['Seed of dawn', 'Seed of a new take of dawn']) {
      const seed = page.getByLabel(label, { exact: true });
      await seed.fill('2147483647');
      const fits = await seed.evaluate((el) => {
        const input = el as HTMLInputElement;
        const style = getComputedStyle(input);
        const ctx = document.createElement('canvas').getContext('2d')!;
        ctx.font = `${style.fontSize} ${style.fontFamily}`;
        // The text area is the box less its padding and the number field's arrows (about 2em in Chromium).
        const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 2 * parseFloat(style.fontSize);
        return ctx.measureText(input.value).width <= room || `${ctx.measureText(input.value).width} > ${room} (${input.clientWidth}, ${style.fontSize} ${style.width})`;
      });
      expect(fits, label).toBe(true);
    }
    await shot(page.getByTestId('scene-0').locator('.scene-head'), 'seed-ten-digits');

    // The simulator's spend per provider is drawn faint and dashed, and said to be simulated.
    await page.locator('nav button[data-tab=spend]').click();
    const bar = page.getByTestId('provider-bar-simulator');
    await expect.poll(() => bar.count(), { timeout: 10_000 }).toBe(1);
    const look = await bar.locator('rect').first().evaluate((r) => {
      const s = getComputedStyle(r);
      return { opacity: Number(s.fillOpacity), dash: s.strokeDasharray };
    });
    expect(look.opacity).toBeLessThan(0.5);
    expect(look.dash).not.toBe('none');
    expect(await bar.locator('text.value').textContent()).toMatch(/USD simulated, never charged$/);
    expect(await bar.locator('text').first().evaluate((t) => getComputedStyle(t).fontStyle)).toBe('italic');
    await shot(page.locator('svg[aria-label="Spend per provider over every project"]'), 'spend-provider-simulated');
    expect(errors).toEqual([]);
    host.child.kill('SIGTERM');
    await host.exited;
  }, 120_000);
});
