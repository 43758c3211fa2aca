import Database from 'better-sqlite3';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, CHROMIUM_ARGS, hasChromium, serve } from '../helpers/browser.ts';
import { cli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';

const EXAMPLE = join(import.meta.dirname, '..', '..', 'examples', 'fox.storyboard.json');
// Nothing here generates: the simulator address is a closed port, so no paid request could leave.
const ENV = { STUDIO_SIMULATOR_BASE_URL: 'http://127.0.0.1:9' };

let browser: Browser;
beforeAll(async () => {
  if (hasChromium) browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});
afterAll(async () => browser?.close());

describe.skipIf(!hasChromium)('a storyboard edited while its save is on its way', () => {
  it('keeps what was typed during the save on screen, unsaved, and saves it with the next Save', async () => {
    const dataDir = tempDir();
    expect((await cli(dataDir, 'storyboard', 'create', 'Fox film', '--file', EXAMPLE)).code).toBe(0);
    const stored = () => {
      const db = new Database(join(dataDir, 'studio.db'), { readonly: true });
      try {
        return (db.prepare(`SELECT json FROM storyboards`).get() as { json: string }).json;
      } finally {
        db.close();
      }
    };
    const { host, url } = await serve(dataDir, ENV);
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    try {
      await page.goto(url);
      await page.locator('.projects li', { hasText: 'Fox film' }).click();
      const first = page.getByLabel('Image prompt').first();
      const second = page.getByLabel('Image prompt').nth(1);
      const save = page.getByRole('button', { name: 'Save storyboard' });
      await expect.poll(() => first.inputValue()).toBe('a red fox asleep in fresh snow at dawn');
      await first.fill('a fox under the northern lights');

      // The host stopped (a real process, SIGSTOP) holds the save in flight while the person keeps typing.
      host.child.kill('SIGSTOP');
      await save.click();
      await second.fill('the fox hears a mouse');
      host.child.kill('SIGCONT');

      await expect.poll(() => stored()).toContain('a fox under the northern lights');
      await page.waitForTimeout(500);
      expect(await second.inputValue()).toBe('the fox hears a mouse');
      expect(stored()).not.toContain('the fox hears a mouse');
      await expect.poll(() => save.isEnabled()).toBe(true);

      await save.click();
      await expect.poll(() => stored()).toContain('the fox hears a mouse');
      expect(await second.inputValue()).toBe('the fox hears a mouse');
      expect(errors).toEqual([]);
    } finally {
      await page.close();
      host.child.kill('SIGCONT');
      host.child.kill('SIGKILL');
      await host.exited;
    }
  });
});
