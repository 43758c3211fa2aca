import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../main/simulator/server.ts';
import { cli } from '../helpers/cli.ts';
import { hasChromium, quickSimulatorSettings, serve, useBrowser } from '../helpers/browser.ts';
import { tempDir } from '../helpers/tmp.ts';

const SHOTS = 'test-results/screenshots';
const browser = useBrowser();
beforeAll(() => mkdirSync(SHOTS, { recursive: true }));

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
  let sim: RunningSimulator;
  afterAll(async () => sim?.close());

  it('shows a portrait project\'s finished video and clips portrait, not in a 16:9 box', async () => {
    sim = await startSimulator({ jobMs: 100 });
    const dataDir = tempDir();
    quickSimulatorSettings(dataDir, sim.url);
    const file = join(dataDir, 'board.json');
    writeFileSync(file, JSON.stringify(BOARD));
    expect((await cli(dataDir, 'storyboard', 'create', 'Tall', '--file', file)).code).toBe(0);
    const { host, url } = await serve(dataDir);
    try {
      const page = await browser().newPage({ viewport: { width: 1280, height: 900 } });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(url);
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
      await page.screenshot({ path: `${SHOTS}/portrait-project.png` });

      // The storyboard's shape, as the app shows it: the preset it is in, and how pictures fill the frame.
      const settings = page.getByRole('group', { name: 'Video size and frame rate' });
      expect(await settings.getByLabel('Shape').inputValue()).toBe('9:16');
      expect(await settings.getByLabel('Fill the frame').inputValue()).toBe('crop');
      await settings.getByLabel('Shape').selectOption('4:5');
      expect([await settings.getByLabel('Width').inputValue(), await settings.getByLabel('Height').inputValue()]).toEqual(['360', '450']);
      await settings.scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${SHOTS}/project-shape-settings.png` });
      expect(errors).toEqual([]);
    } finally {
      host.child.kill('SIGTERM');
      await host.exited;
    }
  }, 90_000);
});
