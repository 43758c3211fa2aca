import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasChromium, NO_PROVIDER, serve, shot, useBrowser } from '../helpers/browser.ts';
import { writeSettings } from '../helpers/processes.ts';
import { tempDir } from '../helpers/tmp.ts';

const browser = useBrowser();
const FAL_KEY = 'a1b2c3d4-e5f6-4789-a012-b3c4d5e6f789:0123456789abcdef0123456789abcdef';

describe.skipIf(!hasChromium)('Copy diagnostics in Settings', () => {
  it('copies the text to the clipboard and says so; where the clipboard is refused, shows it to copy by hand', async () => {
    const dataDir = tempDir();
    writeSettings(dataDir, { engine: { tickMs: 100 }, providers: { fal: { key: FAL_KEY } } });
    const { url } = await serve(dataDir, NO_PROVIDER);
    const context = await browser().newContext({ viewport: { width: 1280, height: 1400 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(url).origin });
    try {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(url);
      await page.locator('[data-tab="settings"]').click();
      await page.getByRole('button', { name: 'Copy diagnostics' }).click();
      await page.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
      const copied = await page.evaluate(() => navigator.clipboard.readText());
      expect(copied).toMatch(/^Take Studio diagnostics, /);
      expect(copied).toContain(`Data folder: ${dataDir}\nLogs: ${join(dataDir, 'logs')}\n`);
      expect(copied).toContain('Running: running');
      // The host's own start is in the log it copies.
      expect(copied).toMatch(/INFO {2}serve\[\d+\] serving http:\/\/127\.0\.0\.1:\d+ on the data folder /);
      for (const part of FAL_KEY.split(':')) expect(copied).not.toContain(part);
      await shot(page.locator('.settings .diagnostics'), 'diagnostics-copied');

      // A browser that will not let the page write to the clipboard.
      const refused = await context.newPage();
      await refused.addInitScript(() => {
        navigator.clipboard.writeText = () => Promise.reject(new DOMException('Write permission denied.', 'NotAllowedError'));
      });
      refused.on('pageerror', (e) => errors.push(e.message));
      await refused.goto(url);
      await refused.locator('[data-tab="settings"]').click();
      await refused.getByRole('button', { name: 'Copy diagnostics' }).click();
      await refused.getByRole('status').filter({ hasText: 'The clipboard could not be used (Write permission denied). Select the text below and copy it.' }).waitFor();
      const shown = refused.getByRole('textbox', { name: 'Diagnostics' });
      expect(await shown.getAttribute('readonly')).not.toBeNull();
      const text = await shown.inputValue();
      expect(text).toMatch(/^Take Studio diagnostics, /);
      expect(text).toContain('========= The last 200 log lines =========');
      for (const part of FAL_KEY.split(':')) expect(text).not.toContain(part);
      await expect.poll(() => refused.getByRole('status').filter({ hasText: 'Copied' }).count()).toBe(0);
      await shot(refused.locator('.settings .diagnostics'), 'diagnostics-shown');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
