import Database from 'better-sqlite3';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_STORYBOARD, hasChromium, NO_PROVIDER, serve, storedStoryboard, useBrowser } from '../helpers/browser.ts';
import { cli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';

const browser = useBrowser();

/** A data folder with "Fox film" (the example storyboard) and "Heron", whose saved storyboard no longer passes the checks. */
async function twoProjects(): Promise<{ dataDir: string; storyboardOf: (project: string) => string }> {
  const dataDir = tempDir();
  expect((await cli(dataDir, 'storyboard', 'create', 'Fox film', '--file', EXAMPLE_STORYBOARD)).code).toBe(0);
  expect((await cli(dataDir, 'storyboard', 'create', 'Heron', '--file', EXAMPLE_STORYBOARD)).code).toBe(0);
  const db = new Database(join(dataDir, 'studio.db'));
  db.prepare(`UPDATE storyboards SET json = '{"scenes": []}' WHERE project_id = (SELECT id FROM projects WHERE name = 'Heron')`).run();
  db.close();
  return { dataDir, storyboardOf: (project) => storedStoryboard(dataDir, project) };
}

const select = (page: Page, project: string) => page.locator('.projects li', { hasText: project }).click();

describe.skipIf(!hasChromium)('the UI when a project or an answer cannot be used', () => {
  it('a project whose storyboard cannot be loaded shows its own error and nothing of the previous project; Save writes only to it', async () => {
    const { dataDir, storyboardOf } = await twoProjects();
    const fox = storyboardOf('Fox film');
    const { host, url } = await serve(dataDir, NO_PROVIDER);
    const page = await browser().newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    try {
      await page.goto(url);
      await select(page, 'Fox film');
      await expect.poll(() => page.getByLabel('Image prompt').first().inputValue()).toBe('a red fox asleep in fresh snow at dawn');

      await select(page, 'Heron');
      await expect.poll(() => page.getByTestId('storyboard-error').textContent()).toBe(
        'the saved storyboard of "Heron" no longer passes the checks ("scenes" must be a list with at least one scene); start a new one to replace it',
      );
      expect(await page.getByLabel('Image prompt').count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Save storyboard' }).count()).toBe(0);

      // The previous project's answer arriving after the next one was chosen is never shown as the next one's.
      await page.route('**/api/getStoryboard', async (route) => {
        if (route.request().postData() === '["Fox film"]') await new Promise((r) => setTimeout(r, 1_000));
        await route.continue().catch(() => undefined);
      });
      await select(page, 'Fox film');
      await select(page, 'Heron');
      await page.getByTestId('storyboard-error').waitFor();
      await page.waitForTimeout(1_500);
      expect(await page.getByLabel('Image prompt').count()).toBe(0);
      await page.unroute('**/api/getStoryboard');

      await page.getByRole('button', { name: 'Start a new storyboard for Heron' }).click();
      // The new draft takes the saved storyboard's revision from the studio first, so the error goes once it is read.
      await expect.poll(() => page.getByText('no longer passes the checks').count()).toBe(0);
      await page.getByLabel('Image prompt').fill('a heron standing in reeds');
      await page.getByRole('button', { name: 'Save storyboard' }).click();
      await expect.poll(() => storyboardOf('Heron')).toContain('a heron standing in reeds');
      expect(storyboardOf('Fox film')).toBe(fox);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
      host.child.kill('SIGKILL');
      await host.exited;
    }
  });

  it('a 500, an unreadable answer and a studio that is gone are shown as messages, and what was typed stays', async () => {
    const { dataDir, storyboardOf } = await twoProjects();
    const fox = storyboardOf('Fox film');
    const { host, url } = await serve(dataDir, NO_PROVIDER);
    const page = await browser().newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    try {
      await page.goto(url);
      await select(page, 'Fox film');
      const prompt = page.getByLabel('Image prompt').first();
      await expect.poll(() => prompt.inputValue()).toBe('a red fox asleep in fresh snow at dawn');
      await prompt.fill('a fox under the northern lights');
      const save = page.getByRole('button', { name: 'Save storyboard' });
      const alert = page.locator('.storyboard [role=alert]');

      // Answers a proxy or a failing host could give; the real host does not answer these on demand, so the
      // browser's routing plays them.
      await page.route('**/api/saveStoryboard', (route) => route.fulfill({ status: 500, contentType: 'text/html', body: '<h1>Internal Server Error</h1>' }));
      await save.click();
      await expect.poll(() => alert.textContent()).toBe('the studio answered HTTP 500; try again');
      expect(await prompt.inputValue()).toBe('a fox under the northern lights');
      await page.unroute('**/api/saveStoryboard');
      await page.route('**/api/saveStoryboard', (route) => route.fulfill({ status: 200, contentType: 'application/json', body: '{"result": ' }));
      await save.click();
      await expect.poll(() => alert.textContent()).toBe('the studio sent an answer this page cannot read (HTTP 200); try again');
      await page.unroute('**/api/saveStoryboard');
      await page.route('**/api/saveSettings', (route) => route.fulfill({ status: 502, body: '' }));
      await page.click('[data-tab=settings]');
      await page.getByLabel('fal key').fill('fal-key-typed-once');
      await page.locator('.row', { has: page.getByLabel('fal key') }).getByRole('button', { name: 'Save key' }).click();
      await expect.poll(() => page.locator('.settings [role=alert]').last().textContent()).toBe('the studio answered HTTP 502; try again');
      expect(await page.getByLabel('fal key').inputValue()).toBe('fal-key-typed-once');
      await page.unroute('**/api/saveSettings');
      // Unsaved edits outlive a visit to another view and to another project.
      await page.click('[data-tab=storyboard]');
      await select(page, 'Heron');
      await page.getByTestId('storyboard-error').waitFor();
      await select(page, 'Fox film');
      await expect.poll(() => prompt.inputValue()).toBe('a fox under the northern lights');

      // The studio itself gone: a real process killed.
      host.child.kill('SIGKILL');
      await host.exited;
      await prompt.fill('a fox under the northern lights, snow falling');
      await save.click();
      await expect.poll(() => alert.textContent()).toBe('the studio did not answer: check that it is still running, then try again');
      expect(await prompt.inputValue()).toBe('a fox under the northern lights, snow falling');
      await page.getByLabel('New project name').fill('Owl');
      await page.getByRole('button', { name: 'Create' }).click();
      await expect.poll(() => page.locator('.projects .error').textContent()).toMatch(/the studio did not answer/);
      expect(await page.getByLabel('New project name').inputValue()).toBe('Owl');
      expect(storyboardOf('Fox film')).toBe(fox);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
      host.child.kill('SIGKILL');
      await host.exited;
    }
  });
});
