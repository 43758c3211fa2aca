import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { hasChromium, NO_PROVIDER, serve, useBrowser } from '../helpers/browser.ts';
import { freshDatabase, postgresAvailable } from '../helpers/postgres.ts';
import { writeSettings } from '../helpers/processes.ts';
import { tempDir } from '../helpers/tmp.ts';

const browser = useBrowser();

const savedTeam = (dataDir: string) => (JSON.parse(readFileSync(join(dataDir, 'settings.json'), 'utf8')) as { team?: Record<string, string> }).team;

async function projectsIn(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ name: string }>('SELECT name FROM projects ORDER BY id')).rows.map((r) => r.name);
  } finally {
    await client.end();
  }
}

describe.skipIf(!hasChromium || !postgresAvailable)('the team database in Settings', () => {
  it('saves the address with its password hidden on the page, says it takes effect at the next start, and the next start uses it', async () => {
    const team = new URL(await freshDatabase());
    // The run's cluster trusts local connections, so the password is carried but never asked for.
    team.password = 's3cret';
    const withPassword = team.toString();
    const shown = withPassword.replace(':s3cret', '');
    const dataDir = tempDir();
    writeSettings(dataDir, { engine: { tickMs: 100 } });
    const first = await serve(dataDir, NO_PROVIDER);
    const page = await browser().newPage({ viewport: { width: 1280, height: 1300 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    try {
      await page.goto(first.url);
      await page.locator('[data-tab="settings"]').click();
      await expect.poll(() => page.getByTestId('store-in-use').textContent()).toBe(`the database on this machine (${join(dataDir, 'studio.db')})`);
      expect(await page.getByTestId('team-database-saved').textContent()).toBe('none saved');

      const address = page.getByLabel('Team database');
      const saveAddress = page.getByRole('button', { name: 'Save team database' });
      await address.fill('mysql://ann:s3cret@db/studio');
      await saveAddress.click();
      await page.getByRole('alert').filter({ hasText: 'is not a PostgreSQL address; write it like postgres://user:password@host:5432/studio' }).waitFor();
      expect(savedTeam(dataDir)).toBeUndefined();

      await address.fill(withPassword);
      await saveAddress.click();
      await page.getByRole('status').filter({ hasText: 'Team database saved. It takes effect when the studio restarts.' }).waitFor();
      expect(await page.getByTestId('team-database-saved').textContent()).toBe(`saved: ${shown}`);
      expect(await address.inputValue()).toBe('');
      expect(await page.content()).not.toContain('s3cret');
      expect(savedTeam(dataDir)).toEqual({ databaseUrl: withPassword });
      // The running studio keeps its store until it restarts.
      expect(await page.getByTestId('store-in-use').textContent()).toMatch(/^the database on this machine/);

      const name = page.getByLabel('Machine name');
      const saveName = page.getByRole('button', { name: 'Save machine name' });
      await name.fill('studio b');
      await saveName.click();
      await page.getByRole('alert').filter({ hasText: '"studio b" cannot name a machine' }).waitFor();
      await name.fill('studio-b');
      await saveName.click();
      await page.getByRole('status').filter({ hasText: 'Machine name saved. It takes effect when the studio restarts.' }).waitFor();
      expect(savedTeam(dataDir)).toEqual({ databaseUrl: withPassword, machineName: 'studio-b' });

      first.host.child.kill('SIGTERM');
      await first.host.exited;
      const second = await serve(dataDir, NO_PROVIDER);
      try {
        // The same address as before: a reload, so the page starts afresh on the restarted studio.
        await page.goto(second.url);
        await page.reload();
        await page.getByLabel('New project name').fill('Fox film');
        await page.getByRole('button', { name: 'Create' }).click();
        await page.getByRole('button', { name: /Fox film/ }).waitFor();
        expect(await projectsIn(withPassword)).toEqual(['Fox film']);

        await page.locator('[data-tab="settings"]').click();
        await expect.poll(() => page.getByTestId('store-in-use').textContent()).toBe(`the team database at ${shown} (saved below)`);
        await page.getByText('now studio-b; each machine of a team needs a name of its own').waitFor();
        expect(await page.content()).not.toContain('s3cret');
        await page.screenshot({ path: 'test-results/screenshots/team-settings.png' });

        await page.getByRole('button', { name: "Use this machine's database" }).click();
        await page.getByRole('status').filter({ hasText: 'The database on this machine will be used. It takes effect when the studio restarts.' }).waitFor();
        expect(savedTeam(dataDir)).toEqual({ machineName: 'studio-b' });
        expect(await page.getByTestId('team-database-saved').textContent()).toBe('none saved');
        expect(errors).toEqual([]);
      } finally {
        second.host.child.kill('SIGTERM');
        await second.host.exited;
      }
    } finally {
      await page.close();
    }
  }, 60_000);
});
