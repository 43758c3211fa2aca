import { describe, expect, it } from 'vitest';
import { hasChromium, shot, simulatedHost, useBrowser } from '../helpers/browser.ts';

const browser = useBrowser();

const NARRATION =
  'The river starts high in the mountains, where snow melts slowly under a pale spring sun. ' +
  'It gathers strength as it falls, cutting through stone and forest, until it reaches the valley.';

describe.skipIf(!hasChromium)('the estimate view foresees each narration', () => {
  it('says how long a scene grows to hold its narration, and warns of the cut a fit "scene" makes', async () => {
    const scenes = [
      { id: 'river', imagePrompt: 'a river in the mountains', narration: NARRATION, duration: 3 },
      { id: 'valley', imagePrompt: 'a wide valley', narration: NARRATION, duration: 3, fit: 'scene' },
    ];
    const { sim, host, url } = await simulatedHost(300, { name: 'River', storyboard: { width: 320, height: 180, fps: 12, scenes } });
    try {
      const page = await browser().newPage({ viewport: { width: 1280, height: 900 } });
      await page.goto(url);
      await expect.poll(() => page.getByTestId('narration-river').textContent()).toMatch(/Narration: river: narration about 1\d\.\d s .*the scene grows from 3 s to about 1\d\.\d s/);
      const cut = page.getByTestId('narration-valley');
      expect(await cut.textContent()).toMatch(/Narration cut: valley: narration about 11\.0 s .*will be cut to the scene's 3 s, losing about 8\.0 s/);
      expect(await cut.getAttribute('class')).toBe('warning');
      await shot(page.getByTestId('estimate'), 'narration-estimate');
      expect(sim.charges).toHaveLength(0);
    } finally {
      host.child.kill('SIGTERM');
      await host.exited;
    }
  }, 60_000);
});
