import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, NO_PROVIDER, serve, useBrowser } from '../helpers/browser.ts';
import { writeSettings } from '../helpers/processes.ts';
import { tempDir } from '../helpers/tmp.ts';

const SHOTS = 'test-results/screenshots';
const ADMIN = 'fal-admin-key-e2e-5c4b3a';

const browser = useBrowser();
beforeAll(() => mkdirSync(SHOTS, { recursive: true }));

describe.skipIf(!hasChromium)("fal's admin key in Settings, in Chromium through the loopback host", () => {
  it('is entered under fal with a line on what it is for, saved to settings, shown only as set, and removed', async () => {
    const dataDir = tempDir();
    writeSettings(dataDir, { providers: { fal: { key: 'fal-key-0123456789' } } });
    const { url } = await serve(dataDir, { ...NO_PROVIDER, FAL_KEY: '' });
    const page = await browser().newPage({ viewport: { width: 1100, height: 800 } });
    try {
      await page.goto(url);
      await page.click('[data-tab=settings]');
      await expect.poll(() => page.getByTestId('fal-admin-key-use').textContent()).toMatch(/fal reports no cost with a result, so fal's figures are estimates\. With an ADMIN-scope key/);
      await page.getByLabel('fal admin key').fill(ADMIN);
      await page.getByRole('button', { name: 'Save admin key' }).click();
      // Saved once the admin key has its own Remove beside fal's key's (a settings file is now written and flushed).
      await expect.poll(() => page.getByRole('button', { name: 'Remove' }).count()).toBe(2);
      expect(await page.getByLabel('fal admin key').inputValue()).toBe('');
      expect(await page.content()).not.toContain(ADMIN);
      expect(JSON.parse(readFileSync(join(dataDir, 'settings.json'), 'utf8')).providers.fal).toEqual({ key: 'fal-key-0123456789', adminKey: ADMIN });
      await page.locator('section.settings').screenshot({ path: `${SHOTS}/settings-fal-admin-key.png` });

      await page.getByRole('button', { name: 'Remove' }).last().click();
      await expect.poll(() => page.getByRole('button', { name: 'Remove' }).count()).toBe(1);
      expect(JSON.parse(readFileSync(join(dataDir, 'settings.json'), 'utf8')).providers.fal).toEqual({ key: 'fal-key-0123456789' });
    } finally {
      await page.close();
    }
  }, 60_000);
});
