import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { hasChromium, NO_PROVIDER, serve, useBrowser } from '../helpers/browser.ts';
import { writeSettings } from '../helpers/processes.ts';
import { tempDir } from '../helpers/tmp.ts';

const browser = useBrowser();

describe.skipIf(!hasChromium)('a tab left open when another program takes the stopped studio’s port', () => {
  it('sends that program no token, says the studio there is not its own, and reconnects once the studio has the port again', async () => {
    const dataDir = tempDir();
    writeSettings(dataDir, { engine: { tickMs: 100 } });
    const first = await serve(dataDir, NO_PROVIDER);
    const token = /token=(\w+)/.exec(first.url)![1]!;
    const port = Number(new URL(first.url).port);
    const page = await browser().newPage({ viewport: { width: 1280, height: 800 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(first.url);
    await page.getByLabel('New project name').waitFor();

    first.host.child.kill('SIGTERM');
    await first.host.exited;
    await page.getByTestId('host-stopped').waitFor({ timeout: 5_000 });

    // Any program of any user may listen on a loopback port that was let go; this one answers like a host would.
    const heard: string[] = [];
    const squatter = createServer((req, res) => {
      heard.push(`${req.method} ${req.url} ${JSON.stringify(req.headers)}`);
      req.resume();
      const hello = req.url?.startsWith('/hello');
      res.writeHead(hello ? 200 : 401, { 'content-type': 'application/json' });
      res.end(JSON.stringify(hello ? { proof: '0'.repeat(64) } : { error: 'no' }));
    });
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
    await page.getByTestId('host-refused').waitFor({ timeout: 5_000 });
    await page.getByLabel('New project name').fill('Owl film');
    await page.getByRole('button', { name: 'Create' }).click();
    await new Promise((r) => setTimeout(r, 1_500));
    expect(heard.length).toBeGreaterThan(0);
    expect(heard.filter((h) => h.includes(token))).toEqual([]);
    await new Promise<void>((resolve) => squatter.close(() => resolve()));
    squatter.closeAllConnections();

    const second = await serve(dataDir, NO_PROVIDER);
    expect(second.url).toBe(first.url);
    await page.getByTestId('host-back').waitFor({ timeout: 10_000 });
    await page.getByLabel('New project name').fill('Hare film');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('button', { name: /Hare film/ }).waitFor({ timeout: 5_000 });
    expect(errors).toEqual([]);
    second.host.child.kill('SIGTERM');
    await second.host.exited;
  }, 60_000);
});
