import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { axe } from '../helpers/axe.ts';
import { EXAMPLE_STORYBOARD, hasChromium, NO_PROVIDER, serve, storedStoryboard, useBrowser } from '../helpers/browser.ts';
import { cli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';

const browser = useBrowser();
const SHOTS = join(import.meta.dirname, '..', '..', 'test-results', 'screenshots');

describe.skipIf(!hasChromium)('two tabs on one storyboard', () => {
  it('shows a save in the other tab within 2 s, keeps what that tab typed, and puts both versions before it at its save', async () => {
    const dataDir = tempDir();
    expect((await cli(dataDir, 'storyboard', 'create', 'Fox film', '--file', EXAMPLE_STORYBOARD)).code).toBe(0);
    const stored = () => JSON.parse(storedStoryboard(dataDir, 'Fox film')).scenes.map((s: { imagePrompt: string }) => s.imagePrompt);
    const { host, url } = await serve(dataDir, NO_PROVIDER);
    const [a, b] = [await browser().newPage(), await browser().newPage()];
    const errors: string[] = [];
    const open = async (page: Page) => {
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(url);
      await page.locator('.projects li', { hasText: 'Fox film' }).click();
      await expect.poll(() => page.getByLabel('Image prompt').first().inputValue()).toBe('a red fox asleep in fresh snow at dawn');
    };
    const prompt = (page: Page, i: number) => page.getByLabel('Image prompt').nth(i);
    const save = (page: Page) => page.getByRole('button', { name: 'Save storyboard' }).click();
    try {
      await open(a);
      await open(b);

      // A saves; B, with nothing typed, shows it within 2 s.
      await prompt(a, 0).fill('a fox under the northern lights');
      await save(a);
      await expect.poll(() => stored()[0]).toBe('a fox under the northern lights');
      const saved = Date.now();
      await expect.poll(() => prompt(b, 0).inputValue(), { timeout: 2_000 }).toBe('a fox under the northern lights');
      expect(Date.now() - saved).toBeLessThan(2_000);

      // B types in one scene while A saves another: B keeps what it typed, and is told.
      await prompt(b, 1).fill('the fox hears a mouse');
      await prompt(a, 2).fill('the fox home at last');
      await save(a);
      await expect.poll(() => stored()[2]).toBe('the fox home at last');
      await expect.poll(() => b.getByTestId('saved-elsewhere').isVisible(), { timeout: 2_000 }).toBe(true);
      expect(await prompt(b, 1).inputValue()).toBe('the fox hears a mouse');
      expect(await prompt(b, 2).inputValue()).toBe('the fox trotting home through pines');

      // B's save was made from an older revision: refused, nothing changed, both versions shown.
      await save(b);
      const conflict = b.getByTestId('storyboard-conflict');
      await expect.poll(() => conflict.isVisible()).toBe(true);
      expect(stored()).toEqual(['a fox under the northern lights', 'the fox listening for mice under the snow', 'the fox home at last']);
      expect(await b.getByTestId('conflict-mine').innerText()).toContain('the fox hears a mouse');
      expect(await b.getByTestId('conflict-theirs').innerText()).toContain('the fox home at last');
      // The scenes that differ are marked on both sides.
      expect(await b.locator('[data-testid=conflict-mine] li.differs').allInnerTexts()).toEqual([expect.stringContaining('hunt'), expect.stringContaining('home')]);
      mkdirSync(SHOTS, { recursive: true });
      // axe-core over the choice itself: nothing serious or critical.
      await axe(b);
      const found = await b.evaluate(async () => {
        const run = (window as unknown as { axe: { run(c: Element, o: object): Promise<{ violations: { id: string; impact: string | null }[] }> } }).axe;
        return (await run.run(document.querySelector('[data-testid=storyboard-conflict]')!, { resultTypes: ['violations'] })).violations;
      });
      expect(found.filter((f) => f.impact === 'serious' || f.impact === 'critical')).toEqual([]);
      await conflict.scrollIntoViewIfNeeded();
      await b.screenshot({ path: join(SHOTS, 'storyboard-two-tabs-conflict.png') });

      // Different scenes: the merge takes both, and B saves it.
      await b.getByRole('button', { name: 'Merge scenes that do not collide' }).click();
      expect(await prompt(b, 2).inputValue()).toBe('the fox home at last');
      await save(b);
      await expect.poll(() => stored()).toEqual(['a fox under the northern lights', 'the fox hears a mouse', 'the fox home at last']);

      // The same scene on both sides: no merge; "Keep mine" saves over, knowingly. B types before A's save reaches it
      // (typed after, B would simply have taken A's revision first), as below.
      await expect.poll(() => prompt(a, 1).inputValue()).toBe('the fox hears a mouse');
      await prompt(b, 0).fill('a fox from tab B');
      await prompt(a, 0).fill('a fox from tab A');
      await save(a);
      await expect.poll(() => stored()[0]).toBe('a fox from tab A');
      await expect.poll(() => b.getByTestId('saved-elsewhere').isVisible()).toBe(true);
      await save(b);
      await expect.poll(() => conflict.isVisible()).toBe(true);
      expect(await b.getByRole('button', { name: 'Merge scenes that do not collide' }).isDisabled()).toBe(true);
      expect(await conflict.innerText()).toContain('both changed scene dawn');
      await b.getByRole('button', { name: 'Keep mine' }).click();
      await expect.poll(() => stored()[0]).toBe('a fox from tab B');
      await expect.poll(() => conflict.isVisible()).toBe(false);

      // And "Take theirs" drops what was typed here for what was saved.
      await expect.poll(() => prompt(a, 0).inputValue()).toBe('a fox from tab B');
      await prompt(b, 1).fill('typed in B, then dropped');
      await prompt(a, 0).fill('a fox from tab A again');
      await save(a);
      await expect.poll(() => stored()[0]).toBe('a fox from tab A again');
      await expect.poll(() => b.getByTestId('saved-elsewhere').isVisible()).toBe(true);
      await save(b);
      await expect.poll(() => conflict.isVisible()).toBe(true);
      await b.getByRole('button', { name: 'Take theirs' }).click();
      expect(await prompt(b, 0).inputValue()).toBe('a fox from tab A again');
      expect(await prompt(b, 1).inputValue()).toBe('the fox hears a mouse');
      expect(stored()[1]).toBe('the fox hears a mouse');
      expect(errors).toEqual([]);
    } finally {
      await a.close();
      await b.close();
      host.child.kill('SIGKILL');
      await host.exited;
    }
  }, 60_000);
});
