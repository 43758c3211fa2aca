import { mkdirSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, hasChromium, serve, useBrowser } from '../helpers/browser.ts';
import { writeSettings } from '../helpers/processes.ts';
import { tempDir } from '../helpers/tmp.ts';

const SHOTS = 'test-results/screenshots';
if (!hasChromium) console.warn(`browser tests skipped: no Chromium at ${CHROMIUM} (install chromium or set CHROMIUM_PATH)`);

const browser = useBrowser();
beforeAll(() => mkdirSync(SHOTS, { recursive: true }));

describe.skipIf(!hasChromium)('a tab left open while the studio stops and starts again', () => {
  it('says at once that the studio stopped, then reconnects by itself and works, with no new address', async () => {
    const dataDir = tempDir();
    writeSettings(dataDir, { engine: { tickMs: 100 } });
    const first = await serve(dataDir);
    const page = await browser().newPage({ viewport: { width: 1280, height: 800 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(first.url);
    await page.getByLabel('New project name').fill('Fox film');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('button', { name: /Fox film/ }).waitFor();

    const stoppedAt = performance.now();
    first.host.child.kill('SIGTERM');
    await first.host.exited;
    await page.getByTestId('host-stopped').waitFor({ timeout: 5_000 });
    // The change stream ends as the host closes; the tab's check then finds nothing listening.
    expect(performance.now() - stoppedAt).toBeLessThan(2_000);
    expect(await page.getByRole('alert').filter({ hasText: 'The studio has stopped' }).count()).toBe(1);
    await page.screenshot({ path: `${SHOTS}/host-stopped.png` });

    const second = await serve(dataDir);
    expect(second.url).toBe(first.url);
    const addressBefore = page.url();
    await page.getByTestId('host-back').waitFor({ timeout: 10_000 });
    expect(await page.getByTestId('host-stopped').count()).toBe(0);
    expect(page.url()).toBe(addressBefore);

    // Calls reach the new host: a project made now appears, and so does one made outside the page.
    await page.getByLabel('New project name').fill('Owl film');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('button', { name: /Owl film/ }).waitFor();
    const token = /token=(\w+)/.exec(second.url)![1];
    const made = await fetch(`${new URL(second.url).origin}/api/createProject`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(['Hare film']),
    });
    expect(made.status).toBe(200);
    await page.getByRole('button', { name: /Hare film/ }).waitFor({ timeout: 5_000 });
    expect(errors).toEqual([]);
    second.host.child.kill('SIGTERM');
    await second.host.exited;
  }, 60_000);
});
