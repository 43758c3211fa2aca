import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ffmpegPath } from '../../main/media/binaries.ts';
import { hasChromium, openPage, shot, simulatedHost, storedStoryboard, useBrowser } from '../helpers/browser.ts';
import { tempDir } from '../helpers/tmp.ts';

const browser = useBrowser();

const IDEA = 'A lighthouse keeper finds a message in a bottle. She reads it by the lamp at night. At dawn she rows out to the island it names.';
const stored = (dataDir: string) => JSON.parse(storedStoryboard(dataDir, 'Lighthouse')) as { width: number; height: number; scenes: { id: string; take?: number }[] };

/** A whole creator's session on the simulator, in a 9:16 project, each step photographed to be looked at. */
describe.skipIf(!hasChromium)("a creator's walk through the app", () => {
  it('drafts, estimates, generates, makes a clip-only take, compares and picks, uses an own picture, renders and plays', async () => {
    const { dataDir, host, url } = await simulatedHost(300);
    const { page, errors } = await openPage(browser(), url, { width: 1400, height: 900 });
    try {
      await page.getByLabel('New project name').fill('Lighthouse');
      await page.getByRole('button', { name: 'Create' }).click();
      const settings = page.getByRole('group', { name: 'Video size and frame rate' });
      await settings.getByLabel('Shape').selectOption('9:16');
      await settings.getByLabel('Frames per second').fill('12');

      const box = page.getByRole('region', { name: 'Draft from an idea' });
      await box.getByLabel('Your idea, in a few sentences').fill(IDEA);
      await box.getByLabel('Scenes').fill('3');
      await expect.poll(() => page.getByTestId('draft-estimate').textContent(), { timeout: 10_000 }).toMatch(/simulated/);
      await shot(page, 'creator-walk-1-idea', { fullPage: true });
      await box.getByRole('button', { name: 'Draft storyboard' }).click();
      await expect.poll(() => page.getByLabel('Image prompt').count(), { timeout: 20_000 }).toBe(3);
      await shot(page, 'creator-walk-2-drafted', { fullPage: true });
      // The shape chosen before the draft is kept on it, to be saved.
      expect(await settings.getByLabel('Shape').inputValue()).toBe('9:16');
      await page.getByRole('button', { name: 'Save storyboard' }).click();
      await expect.poll(() => stored(dataDir).height > stored(dataDir).width).toBe(true);

      await expect.poll(() => page.getByTestId('estimate-total').textContent(), { timeout: 10_000 }).toMatch(/USD/);
      await shot(page.getByTestId('estimate'), 'creator-walk-3-estimate');
      await page.getByTestId('generate').click();
      await expect.poll(() => page.getByTestId('generate-started').textContent()).toMatch(/^The last Generate, at [0-9:]+( [AP]M)?, started 10 steps for about \d\.\d{2,6} USD, simulated: the simulator's made-up money, never charged\./);
      await shot(page, 'creator-walk-4-generating', { fullPage: true });
      const first = stored(dataDir).scenes[0]!.id;
      const take = (n: number) => page.getByTestId(`take-${first}-${n}`);
      await expect.poll(() => take(1).getAttribute('data-state'), { timeout: 40_000, interval: 250 }).toBe('ready');
      await shot(page, 'creator-walk-5-generated', { fullPage: true });
      // Its still is shown whole, in the project's 9:16 shape.
      const still = (await take(1).locator('img').boundingBox())!;
      expect(still.height).toBeGreaterThan(still.width);

      await page.getByLabel(`What a new take of ${first} makes again`).selectOption('clip');
      await page.getByRole('button', { name: `New take of ${first}` }).click();
      await expect.poll(() => page.getByRole('group', { name: `New take of ${first}` }).textContent()).toMatch(/costs about 0\.\d{2,6} USD, simulated: the simulator's made-up money, never charged\./);
      await shot(page.getByTestId(`scene-0`), 'creator-walk-6-clip-only-offer');
      await page.getByRole('group', { name: `New take of ${first}` }).getByRole('button', { name: 'Make it' }).click();
      await expect.poll(() => take(2).getAttribute('data-state'), { timeout: 30_000, interval: 250 }).toBe('ready');
      await shot(page.getByTestId(`scene-0`), 'creator-walk-7-clip-only-take');

      await page.getByRole('button', { name: `Compare the takes of ${first}` }).click();
      const compare = page.getByTestId(`compare-${first}`);
      await page.waitForFunction(() => [...document.querySelectorAll('.compare-card video')].every((v) => (v as HTMLVideoElement).currentTime > 0), undefined, { timeout: 15_000 });
      // A 9:16 clip stands tall in its card, not pillarboxed in a wide box.
      const media = (await page.getByTestId(`compare-${first}-1`).locator('video').boundingBox())!;
      expect(media.height / media.width).toBeCloseTo(16 / 9, 1);
      await shot(page, 'creator-walk-8-compare', { fullPage: true });
      await compare.getByRole('button', { name: `Use take 1 of ${first}` }).click();
      await expect.poll(() => page.getByTestId(`compare-${first}-1`).getAttribute('aria-current')).toBe('true');
      await compare.getByRole('button', { name: 'Close' }).click();
      await expect.poll(() => stored(dataDir).scenes[0]!.take).toBe(1);

      const mine = join(tempDir(), 'my-lamp.png');
      expect(spawnSync(ffmpegPath(), ['-v', 'error', '-f', 'lavfi', '-i', 'color=c=orange:s=360x640', '-frames:v', '1', '-y', mine]).status).toBe(0);
      const second = stored(dataDir).scenes[1]!.id;
      await page.getByLabel(`Your own picture for ${second}`).setInputFiles(mine);
      await expect.poll(() => page.getByTestId(`own-${second}`).textContent(), { timeout: 10_000 }).toContain('yours');
      await shot(page.getByTestId('scene-1'), 'creator-walk-9-own-picture');
      await expect.poll(() => page.getByTestId('generate').isEnabled(), { timeout: 10_000 }).toBe(true);
      await shot(page.getByTestId('estimate'), 'creator-walk-10-estimate-own');
      await page.getByTestId('generate').click();

      const player = page.getByTestId('final-player');
      await expect.poll(() => player.count(), { timeout: 60_000, interval: 500 }).toBe(1);
      await player.evaluate((v) => (v as HTMLVideoElement).play());
      await page.waitForFunction(() => ((document.querySelector('[data-testid=final-player]') as HTMLVideoElement | null)?.currentTime ?? 0) > 0.3, undefined, { timeout: 15_000 });
      await page.getByTestId('final-video').scrollIntoViewIfNeeded();
      await shot(page, 'creator-walk-11-playing', { fullPage: true });
      await shot(page.getByTestId('scene-1'), 'creator-walk-12-own-picture-made');
      const frame = (await player.boundingBox())!;
      expect(frame.height).toBeGreaterThan(frame.width);
      expect(errors).toEqual([]);
    } finally {
      host.child.kill('SIGTERM');
      await host.exited;
    }
  }, 180_000);
});
