import { expect, it, describe } from 'vitest';
import { EXAMPLE_STORYBOARD, hasChromium, NO_PROVIDER, serve, storedStoryboard, useBrowser } from '../helpers/browser.ts';
import { cli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';

const browser = useBrowser();

describe.skipIf(!hasChromium)('a storyboard edited while its save is on its way', () => {
  it('keeps what was typed during the save on screen, unsaved, and saves it with the next Save', async () => {
    const dataDir = tempDir();
    expect((await cli(dataDir, 'storyboard', 'create', 'Fox film', '--file', EXAMPLE_STORYBOARD)).code).toBe(0);
    const stored = () => storedStoryboard(dataDir, 'Fox film');
    const { host, url } = await serve(dataDir, NO_PROVIDER);
    const page = await browser().newPage();
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
