import { describe, expect, it } from 'vitest';
import { hasChromium, openPage, shot, simulatedHost, useBrowser } from '../helpers/browser.ts';

const browser = useBrowser();

/** A portrait project, small so the simulator makes it quickly. */
const BOARD = {
  aspect: '9:16',
  resolution: 360,
  fps: 12,
  scenes: [
    { id: 'dawn', imagePrompt: 'a lighthouse at dawn', duration: 1 },
    { id: 'kite', imagePrompt: 'a red kite over hills', duration: 1 },
  ],
};

describe.skipIf(!hasChromium)('players in the video\'s own shape, in Chromium through the loopback host', () => {
  it('shows a portrait project\'s finished video and clips portrait, not in a 16:9 box', async () => {
    const { host, url } = await simulatedHost(100, { name: 'Tall', storyboard: BOARD });
    try {
      const { page, errors } = await openPage(browser(), url, { width: 1280, height: 900 });
      await expect.poll(() => page.getByTestId('estimate-total').textContent()).toMatch(/New steps/);
      await page.getByTestId('generate').click();

      const player = page.getByTestId('final-player');
      await player.waitFor({ timeout: 60_000 });
      await expect.poll(() => player.getAttribute('data-shape'), { timeout: 20_000 }).toBe('360x640');
      const box = (await player.boundingBox())!;
      expect(box.height / box.width).toBeCloseTo(640 / 360, 1);
      const clip = page.locator('video[aria-label="clip of dawn"]');
      await expect.poll(() => clip.getAttribute('data-shape'), { timeout: 20_000 }).toBe('360x640');
      const clipBox = (await clip.boundingBox())!;
      expect(clipBox.height).toBeGreaterThan(clipBox.width);

      await player.scrollIntoViewIfNeeded();
      await shot(page, 'portrait-project');

      // The storyboard's shape, as the app shows it: the preset it is in, and how pictures fill the frame.
      const settings = page.getByRole('group', { name: 'Video size and frame rate' });
      expect(await settings.getByLabel('Shape').inputValue()).toBe('9:16');
      expect(await settings.getByLabel('Fill the frame').inputValue()).toBe('crop');
      await settings.getByLabel('Shape').selectOption('4:5');
      expect([await settings.getByLabel('Width').inputValue(), await settings.getByLabel('Height').inputValue()]).toEqual(['360', '450']);
      await settings.scrollIntoViewIfNeeded();
      await shot(page, 'project-shape-settings');
      expect(errors).toEqual([]);
    } finally {
      host.child.kill('SIGTERM');
      await host.exited;
    }
  }, 90_000);
});
