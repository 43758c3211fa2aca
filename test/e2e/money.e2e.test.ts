import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FAL_MODEL } from '../fakes/providers.ts';
import { hasChromium, NO_PROVIDER, openPage, serve, shot, useBrowser } from '../helpers/browser.ts';
import { cli } from '../helpers/cli.ts';
import { writeSettings } from '../helpers/processes.ts';
import { falAndSimulatorFolderForTest } from '../helpers/running.ts';
import { tempDir } from '../helpers/tmp.ts';

const browser = useBrowser();
afterEach(() => vi.unstubAllEnvs());

const NO_KEYS = { FAL_KEY: '', OPENAI_API_KEY: '', REPLICATE_API_TOKEN: '', ELEVENLABS_API_KEY: '' };
const ENGINE = { tickMs: 100, leaseMs: 60_000, poll: { intervalMs: 100, maxIntervalMs: 200 } };

function board(dir: string, steps: object): string {
  const file = join(dir, 'board.json');
  writeFileSync(
    file,
    JSON.stringify({
      width: 320,
      height: 180,
      steps,
      scenes: [{ id: 'dawn', imagePrompt: 'a red fox asleep in snow', motionPrompt: 'slow push in', narration: 'At dawn, the fox wakes.', duration: 3 }],
    }),
  );
  return file;
}

describe.skipIf(!hasChromium)('money in Chromium, through the loopback host', () => {
  it('prices a scene whose provider has no key, names the missing keys, and Generate asks for them, buying nothing', async () => {
    for (const [k, v] of Object.entries(NO_KEYS)) vi.stubEnv(k, v);
    const dataDir = tempDir();
    writeSettings(dataDir, { engine: ENGINE, ui: { confirmAbove: 100 } });
    const steps = { image: { provider: 'fal', model: 'fal-ai/flux/schnell' }, clip: { provider: 'simulator', model: 'sim-clip-1' }, speech: { provider: 'openai', model: 'tts-1' } };
    expect((await cli(dataDir, 'storyboard', 'create', 'Fox', '--file', board(dataDir, steps))).code).toBe(0);
    const { host, url } = await serve(dataDir, { ...NO_PROVIDER, ...NO_KEYS });
    const { page, errors } = await openPage(browser(), url, { width: 1400, height: 900 });
    try {
      await page.getByRole('button', { name: /Fox/ }).click();
      const missing = page.getByTestId('estimate-missing-keys');
      await expect.poll(() => missing.textContent()).toBe(
        'Missing keys: fal, OpenAI. These steps are priced from the catalogue; add the keys in Settings (or set FAL_KEY, OPENAI_API_KEY) before you generate.',
      );
      const estimate = page.getByTestId('estimate');
      expect(await estimate.locator('tr', { hasText: 'dawn:image' }).textContent()).toMatch(/0\.0\d+ USD no key yet.*catalogue: 1 megapixel/);
      expect(await estimate.locator('tr', { hasText: 'dawn:clip' }).textContent()).toMatch(/0\.\d{2,6} USD simulated/);
      expect(await page.getByTestId('estimate-simulated').textContent()).toMatch(/0\.003345 USD real money, 0\.\d{2,6} USD simulated: the simulator's made-up prices, never charged/);
      await shot(page, 'money-1-estimate-missing-keys', { fullPage: true });

      await page.getByTestId('generate').click();
      await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/no API key yet for fal \(Settings, or FAL_KEY\), OpenAI \(Settings, or OPENAI_API_KEY\).*Nothing was enqueued\./);
      await shot(page, 'money-2-generate-asks-for-keys', { fullPage: true });
      await page.click('[data-tab=tasks]');
      await page.waitForTimeout(300);
      expect(await page.locator('.task').count()).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
      host.child.kill('SIGTERM');
      await host.exited;
    }
  }, 60_000);

  it('shows the simulator\'s made-up money apart from real money in the spend view', async () => {
    const { ledger, dir: dataDir } = await falAndSimulatorFolderForTest(ENGINE);
    expect((await cli(dataDir, 'storyboard', 'create', 'Fox', '--file', board(dataDir, { image: { provider: 'fal', model: FAL_MODEL } }))).code).toBe(0);
    expect((await cli(dataDir, 'generate', 'Fox')).code).toBe(0);
    expect((await cli(dataDir, 'worker', '--until-idle')).code).toBe(0);
    expect(ledger.charged).toHaveLength(1);

    const { host, url } = await serve(dataDir, {});
    const { page, errors } = await openPage(browser(), url, { width: 1400, height: 1000 });
    try {
      // The sidebar's "spent" is fal's real money only; the simulator's made-up money stands apart, marked.
      const sidebar = page.getByRole('complementary', { name: 'Projects' });
      await expect.poll(() => sidebar.getByRole('button', { name: /Fox/ }).textContent()).toMatch(/^Foxspent 0\.0\d{1,5} USD · 0\.(?!0+ )\d{2,6} USD simulated$/);
      expect(await sidebar.locator('.simulated').evaluate((e) => getComputedStyle(e).fontStyle)).toBe('italic');
      await shot(sidebar, 'sidebar-simulated');
      await page.getByRole('button', { name: /Fox/ }).click();
      await page.click('[data-tab=spend]');
      // fal's image is real money; the simulator's clip and narration are not, and are not in the real figures.
      await expect.poll(() => page.getByTestId('spend-totals').textContent()).toMatch(/^Billed0\.0\d+ USD/);
      expect(await page.getByTestId('spend-totals').textContent()).not.toContain('simulated');
      expect(await page.getByTestId('spend-simulated').textContent()).toMatch(/^Billed \(simulated\)0\.(?!0+ )\d{2,6} USD/);
      expect(await page.getByTestId('spend-by-model').locator('tr', { hasText: 'sim-clip-1' }).textContent()).toContain('(simulated, never charged)');
      expect(await page.getByTestId('spend-by-model').locator('tr', { hasText: FAL_MODEL }).textContent()).not.toContain('simulated');
      expect(await page.getByTestId('spend-simulated-Fox').textContent()).toMatch(/^0\.(?!0+$)\d{2,6}$/);
      expect(await page.getByTestId('spend-projects').locator('tbody tr').first().innerText()).toMatch(/^Fox\tUSD\t/);
      await shot(page, 'money-3-spend-real-and-simulated', { fullPage: true });

      await page.click('[data-tab=tasks]');
      await expect.poll(() => page.locator('.task .simulated').count()).toBe(2);
      await shot(page, 'money-4-tasks-simulated', { fullPage: true });
      expect(errors).toEqual([]);
    } finally {
      await page.close();
      host.child.kill('SIGTERM');
      await host.exited;
    }
  }, 90_000);
});
