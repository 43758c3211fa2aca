import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasChromium, NO_PROVIDER, serve, useBrowser } from '../helpers/browser.ts';
import { postgresAvailable } from '../helpers/postgres.ts';
import type { StudioProcess } from '../helpers/processes.ts';
import { storeKinds } from '../helpers/stores.ts';
import { teamOn } from '../helpers/team.ts';

/**
 * Two machines of a team, each its own studio process on one PostgreSQL team database: a storyboard saved on one
 * is seen by the other's API, and by the other's app in Chromium, within 2 s, both ways.
 */

const browser = useBrowser();
const SHOTS = join(import.meta.dirname, '..', '..', 'test-results', 'screenshots');
const postgres = storeKinds().find((k) => k.kind === 'postgres')!;
const board = (prompt: string, revision: number) => ({ revision, width: 1280, height: 720, scenes: [{ id: 'dawn', imagePrompt: prompt, duration: 2 }] });

interface Served {
  host: StudioProcess;
  url: string;
}

async function call<T>(at: Served, method: string, ...args: unknown[]): Promise<T> {
  const base = at.url.replace(/\/?(#.*)?$/, '');
  const token = /token=([^&\s]+)/.exec(at.url)?.[1];
  const res = await fetch(`${base}/api/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${decodeURIComponent(token ?? '')}` },
    body: JSON.stringify(args),
  });
  const body = (await res.json()) as { result: T; error?: string };
  if (!res.ok) throw new Error(`${method}: HTTP ${res.status} ${body.error}`);
  return body.result;
}

/** How long, in ms, until `read` gives `want`, asked every 50 ms; fails past 2 s. */
async function seenWithin(read: () => Promise<unknown>, want: unknown): Promise<number> {
  const start = Date.now();
  for (;;) {
    const got = await read();
    if (JSON.stringify(got) === JSON.stringify(want)) return Date.now() - start;
    if (Date.now() - start > 2_000) throw new Error(`not seen within 2 s; still ${JSON.stringify(got)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(!postgresAvailable)('a saved storyboard on a team database', () => {
  it('is seen by the other machine\'s API and app within 2 s, both ways', async () => {
    const team = await teamOn(postgres, NO_PROVIDER);
    const [a, b] = [team.machine('machine-a', { engine: { tickMs: 100 } }), team.machine('machine-b', { engine: { tickMs: 100 } })];
    const served: Served[] = [];
    try {
      const [onA, onB] = [await serve(a.dataDir, a.env), await serve(b.dataDir, b.env)];
      served.push(onA, onB);
      await call(onA, 'createProject', 'Fox');
      const prompts = async (at: Served) => ((await call<{ revision: number; scenes: { imagePrompt: string }[] } | null>(at, 'getStoryboard', 'Fox')) ?? null);
      const promptOf = async (at: Served) => {
        const got = await prompts(at);
        return got && [got.revision, got.scenes[0]!.imagePrompt];
      };

      expect(await call<number>(onA, 'saveStoryboard', 'Fox', board('a fox asleep in snow', 0))).toBe(1);
      const first = await seenWithin(() => promptOf(onB), [1, 'a fox asleep in snow']);
      expect(await call<number>(onB, 'saveStoryboard', 'Fox', board('the fox wakes', 1))).toBe(2);
      const back = await seenWithin(() => promptOf(onA), [2, 'the fox wakes']);
      expect(first).toBeLessThan(2_000);
      expect(back).toBeLessThan(2_000);

      if (!hasChromium) return;
      const page = await browser().newPage({ viewport: { width: 1280, height: 900 } });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      try {
        await page.goto(onB.url);
        await page.locator('.projects li', { hasText: 'Fox' }).click();
        const prompt = page.getByLabel('Image prompt').first();
        await expect.poll(() => prompt.inputValue()).toBe('the fox wakes');

        expect(await call<number>(onA, 'saveStoryboard', 'Fox', board('the fox trots home', 2))).toBe(3);
        const saved = Date.now();
        await expect.poll(() => prompt.inputValue(), { timeout: 2_000, interval: 50 }).toBe('the fox trots home');
        expect(Date.now() - saved).toBeLessThan(2_000);
        mkdirSync(SHOTS, { recursive: true });
        await page.screenshot({ path: join(SHOTS, 'team-storyboard-seen-on-b.png') });
        expect(errors).toEqual([]);
      } finally {
        await page.close();
      }
    } finally {
      for (const s of served) {
        s.host.child.kill('SIGTERM');
        await s.host.exited;
      }
    }
  }, 60_000);
});
