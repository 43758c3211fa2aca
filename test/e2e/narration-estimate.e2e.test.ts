import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../main/simulator/server.ts';
import { cli } from '../helpers/cli.ts';
import { hasChromium, serve, useBrowser, quickSimulatorSettings } from '../helpers/browser.ts';
import { tempDir } from '../helpers/tmp.ts';

const SHOTS = 'test-results/screenshots';
const browser = useBrowser();
beforeAll(() => mkdirSync(SHOTS, { recursive: true }));

const NARRATION =
  'The river starts high in the mountains, where snow melts slowly under a pale spring sun. ' +
  'It gathers strength as it falls, cutting through stone and forest, until it reaches the valley.';

describe.skipIf(!hasChromium)('the estimate view foresees each narration', () => {
  let sim: RunningSimulator;
  afterAll(async () => sim?.close());

  it('says how long a scene grows to hold its narration, and warns of the cut a fit "scene" makes', async () => {
    sim = await startSimulator({ jobMs: 300 });
    const dataDir = tempDir();
    quickSimulatorSettings(dataDir, sim.url);
    const file = join(dataDir, 'board.json');
    const scenes = [
      { id: 'river', imagePrompt: 'a river in the mountains', narration: NARRATION, duration: 3 },
      { id: 'valley', imagePrompt: 'a wide valley', narration: NARRATION, duration: 3, fit: 'scene' },
    ];
    writeFileSync(file, JSON.stringify({ width: 320, height: 180, fps: 12, scenes }));
    expect((await cli(dataDir, 'storyboard', 'create', 'River', '--file', file)).code).toBe(0);
    const { host, url } = await serve(dataDir);
    try {
      const page = await browser().newPage({ viewport: { width: 1280, height: 900 } });
      await page.goto(url);
      await expect.poll(() => page.getByTestId('narration-river').textContent()).toMatch(/Narration: river: narration about 1\d\.\d s .*the scene grows from 3 s to about 1\d\.\d s/);
      const cut = page.getByTestId('narration-valley');
      expect(await cut.textContent()).toMatch(/Narration cut: valley: narration about 11\.0 s .*will be cut to the scene's 3 s, losing about 8\.0 s/);
      expect(await cut.getAttribute('class')).toBe('warning');
      await page.getByTestId('estimate').screenshot({ path: join(SHOTS, 'narration-estimate.png') });
      expect(sim.charges).toHaveLength(0);
    } finally {
      host.child.kill('SIGTERM');
      await host.exited;
    }
  }, 60_000);
});
