import { describe, expect, it } from 'vitest';
import { hasChromium, shot, simulatedHost, storedStoryboard, useBrowser } from '../helpers/browser.ts';

const browser = useBrowser();

const IDEA =
  'A lighthouse keeper finds a message in a bottle on the rocks. She reads it by the lamp at night. ' +
  'At dawn she rows out toward the island it names. On the island a child waves from the shore.';

describe.skipIf(!hasChromium)('Draft from an idea, in the app', () => {
  it('prices the draft before the button, drafts the scenes onto an empty storyboard, and asks before replacing them', async () => {
    const { sim, dataDir, host, url } = await simulatedHost(300);
    try {
      const page = await browser().newPage({ viewport: { width: 1280, height: 1000 } });
      await page.goto(url);
      await page.getByLabel('New project name').fill('Lighthouse');
      await page.getByRole('button', { name: 'Create' }).click();
      const box = page.getByRole('region', { name: 'Draft from an idea' });
      await box.getByLabel('Your idea, in a few sentences').fill(IDEA);
      await box.getByLabel('Scenes').fill('4');
      await expect.poll(() => page.getByTestId('draft-estimate').textContent(), { timeout: 10_000 }).toMatch(/Estimate: about 0\.\d{2,6} USD \(simulated: .*never charged\) with the simulator sim-draft-1\./);
      expect(sim.charges).toHaveLength(0);
      await shot(page, 'draft-from-idea');

      await box.getByRole('button', { name: 'Draft storyboard' }).click();
      await expect.poll(() => page.getByLabel(/Image prompt/).count(), { timeout: 20_000 }).toBe(4);
      expect(sim.charges.filter((c) => c.kind === 'draft')).toHaveLength(1);
      const saved = JSON.parse(storedStoryboard(dataDir, 'Lighthouse'));
      expect(saved.scenes.map((s: { narration: string }) => s.narration)).toEqual([
        'A lighthouse keeper finds a message in a bottle on the rocks.',
        'She reads it by the lamp at night.',
        'At dawn she rows out toward the island it names.',
        'On the island a child waves from the shore.',
      ]);
      await box.getByLabel('Your idea, in a few sentences').fill(IDEA);
      await box.getByLabel('Scenes').fill('4');
      await expect.poll(() => page.getByTestId('draft-estimate').textContent()).toMatch(/Costs nothing: this idea was drafted before \(task \d+\)/);
      await box.getByRole('button', { name: 'Draft storyboard' }).click();
      await expect.poll(() => box.getByRole('group', { name: 'Replace the storyboard?' }).textContent()).toMatch(/replaces all 4 scenes/);
      await shot(page, 'draft-from-idea-replace');
      await box.getByRole('button', { name: 'Replace storyboard' }).click();
      await expect.poll(async () => JSON.parse(storedStoryboard(dataDir, 'Lighthouse')).scenes.length).toBe(4);
      expect(sim.charges.filter((c) => c.kind === 'draft')).toHaveLength(1);
    } finally {
      host.child.kill('SIGTERM');
      await host.exited;
    }
  }, 90_000);
});
