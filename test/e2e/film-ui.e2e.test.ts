import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { hasChromium, openPage, shot, simulatedHost, useBrowser } from '../helpers/browser.ts';

const browser = useBrowser();

const BOARD = {
  width: 360,
  height: 640,
  fps: 12,
  scenes: [
    { id: 'dawn', imagePrompt: 'a lighthouse at dawn', motionPrompt: 'slow push in', narration: 'At dawn, she reads it.', duration: 1 },
    { id: 'sea', imagePrompt: 'a rowing boat on a calm sea', motionPrompt: 'track', duration: 1 },
  ],
};

/** The two windows a creator's laptop gives the app. */
const SIZES = [
  { name: 'laptop', width: 1366, height: 768 },
  { name: 'small', width: 1024, height: 640 },
] as const;

const box = async (l: Locator) => (await l.boundingBox())!;
const ready = (page: Page, n: number) =>
  expect.poll(() => page.getByTestId(`take-dawn-${n}`).getAttribute('data-state'), { timeout: 30_000, interval: 250 }).toBe('ready');

/** At each window size: photographed, and `check` run. */
async function atEachSize(page: Page, name: string, check: (size: (typeof SIZES)[number]) => Promise<void>, target?: () => Locator): Promise<void> {
  for (const size of SIZES) {
    await page.setViewportSize({ width: size.width, height: size.height });
    await check(size);
    await shot(target ? target() : page, `film-ui-${name}-${size.name}`);
  }
}

describe.skipIf(!hasChromium)('the film views as a creator sees them, at 1366x768 and 1024x640', () => {
  it('labels the scene boxes, shows media in the project shape, one current price, takes that fit Compare, a centred player and money marked by kind', async () => {
    const { host, url } = await simulatedHost(300, { name: 'Keeper', storyboard: BOARD });
    const { page, errors } = await openPage(browser(), url, { width: 1366, height: 768 });
    try {
      const scene = page.getByTestId('scene-0');
      await expect.poll(() => scene.locator('label.field').allInnerTexts()).toEqual(['Image prompt', 'Motion', 'Narration']);

      // Before Generate the empty image and clip boxes already stand in the 9:16 shape, and the seed stays on the card.
      await atEachSize(page, 'editor', async () => {
        for (const empty of await page.getByTestId('preview-dawn').locator('.preview-empty:not(.audio)').all()) {
          const b = await box(empty);
          expect(b.height).toBeGreaterThan(110);
          expect(b.width / b.height).toBeCloseTo(9 / 16, 1);
        }
        const seed = await box(page.getByLabel('Seed of dawn'));
        const card = await box(scene);
        expect(seed.x + seed.width).toBeLessThanOrEqual(card.x + card.width);
      }, () => scene);

      await page.getByTestId('generate').click();
      const started = page.getByTestId('generate-started');
      await expect.poll(() => started.textContent()).toMatch(/^The last Generate, at [0-9:]+( [AP]M)?, started 6 steps for about /);
      await ready(page, 1);

      // Four variations: the offer says its price is for the take alone, apart from the Estimate's Generate of the storyboard.
      await page.getByLabel('Variations of a new take of dawn').fill('4');
      await page.getByRole('button', { name: 'New take of dawn' }).click();
      const offer = page.getByRole('group', { name: 'New take of dawn' });
      await expect.poll(() => offer.textContent()).toMatch(/costs about \d\.\d{2,6} USD.*This price is for this new take alone; the Estimate beside prices a Generate of the whole storyboard/);
      await atEachSize(page, 'take-offer', async () => undefined);
      await offer.getByRole('button', { name: 'Make it' }).click();
      for (const n of [2, 3, 4, 5]) await ready(page, n);

      // Take stills are 120 px tall in the project's shape.
      const still = await box(page.getByTestId('take-dawn-1').locator('img'));
      expect(still.height).toBeGreaterThan(115);
      expect(still.width / still.height).toBeCloseTo(9 / 16, 1);

      // Compare: all five takes and their "Use this take" in sight at both sizes.
      await page.getByRole('button', { name: 'Compare the takes of dawn' }).click();
      const compare = page.getByTestId('compare-dawn');
      await atEachSize(page, 'compare', async (size) => {
        for (const n of [1, 2, 3, 4, 5]) {
          const card = page.getByTestId(`compare-dawn-${n}`);
          await expect.poll(() => card.locator('video').getAttribute('data-shape'), { timeout: 15_000 }).toBe('360x640');
          const b = await box(card);
          expect(b.y + b.height).toBeLessThanOrEqual(size.height);
          expect(b.x + b.width).toBeLessThanOrEqual(size.width);
        }
      });
      await compare.getByRole('button', { name: 'Close' }).click();

      // An edit takes the last Generate's figures away and says the table is for the storyboard as last saved.
      await page.getByLabel('Narration').first().fill('At dawn, she reads it by the lamp.');
      await expect.poll(() => page.getByTestId('estimate-stale').textContent()).toBe('These figures are for the storyboard as last saved: save it to price your changes.');
      expect(await started.count()).toBe(0);
      await atEachSize(page, 'estimate-stale', async () => undefined, () => page.getByTestId('estimate'));
      await page.getByRole('button', { name: 'Save storyboard' }).click();
      await expect.poll(() => page.getByTestId('estimate-stale').count()).toBe(0);
      await page.getByTestId('generate').click();

      // The finished video is centred in its card.
      const player = page.getByTestId('final-player');
      await expect.poll(() => player.getAttribute('data-shape'), { timeout: 60_000 }).toBe('360x640');
      await atEachSize(page, 'final-player', async () => {
        const p = await box(player);
        const card = await box(page.getByTestId('final-video'));
        expect(Math.abs(p.x + p.width / 2 - (card.x + card.width / 2))).toBeLessThan(4);
      }, () => page.getByTestId('final-video'));

      // Spend: real money without the simulator's, the simulator's in columns of its own, each headed by its kind.
      await page.getByRole('button', { name: 'Spend', exact: true }).click();
      const projects = page.getByTestId('spend-projects');
      await expect.poll(() => page.getByTestId('spend-simulated-Keeper').textContent(), { timeout: 10_000 }).toMatch(/^(?!0\.0+$)\d+\.\d{2,6}$/);
      expect(await page.getByTestId('spend-real-billed-Keeper').textContent()).toBe('0.00');
      expect(await projects.locator('tbody tr', { hasText: 'Keeper' }).innerText()).toMatch(/^Keeper\tUSD\t/);
      expect(await projects.locator('thead').innerText()).toMatch(/Currency[\s\S]*Real money[\s\S]*Simulated \(never charged\)[\s\S]*Billed[\s\S]*Counted from usage/);
      // The table stays inside the window at both sizes.
      await atEachSize(page, 'spend', async (size) => {
        const t = await box(projects);
        expect(t.x + t.width).toBeLessThanOrEqual(size.width);
      });
      expect(errors).toEqual([]);
    } finally {
      await page.close();
      host.child.kill('SIGTERM');
      await host.exited;
    }
  }, 120_000);
});
