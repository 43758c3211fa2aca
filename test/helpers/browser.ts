import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { startStudio, writeSettings, type StudioProcess } from './processes.ts';

/** Debian's Chromium; the UI is driven in a real browser through the loopback host. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
export const hasChromium = existsSync(CHROMIUM);

/** Starts `studio serve` on a data folder and waits for the address it prints. */
export async function serve(dataDir: string, env: Record<string, string> = {}): Promise<{ host: StudioProcess; url: string }> {
  const host = startStudio(dataDir, ['serve', '--no-open'], env);
  for (let i = 0; i < 400 && !/Open (\S+)/.test(host.stdout()); i++) await new Promise((r) => setTimeout(r, 25));
  const url = /Open (\S+)/.exec(host.stdout())?.[1];
  if (!url) throw new Error(`the host did not start:\n${host.stderr()}`);
  return { host, url };
}

/** One Chromium for a test file: launched before its tests, closed after. Call `browser()` inside a test. */
export function useBrowser(): () => Browser {
  let launched: Browser | undefined;
  beforeAll(async () => {
    if (hasChromium) launched = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  afterAll(async () => launched?.close());
  return () => launched!;
}

export const EXAMPLE_STORYBOARD = join(import.meta.dirname, '..', '..', 'examples', 'fox.storyboard.json');

/** For pages that generate nothing: the simulator's address is a closed port, so no paid request could leave. */
export const NO_PROVIDER = { STUDIO_SIMULATOR_BASE_URL: 'http://127.0.0.1:9' };

/** A project's storyboard as stored, read through a connection of its own. */
export function storedStoryboard(dataDir: string, project: string): string {
  const db = new Database(join(dataDir, 'studio.db'), { readonly: true });
  try {
    return (db.prepare(`SELECT json FROM storyboards JOIN projects ON projects.id = project_id WHERE name = ?`).get(project) as { json: string }).json;
  } finally {
    db.close();
  }
}

/** Settings for a page test on the simulator: a quick engine, and no confirmation below 100 USD. */
export function quickSimulatorSettings(dataDir: string, simulatorUrl: string): void {
  writeSettings(dataDir, {
    engine: { tickMs: 100, leaseMs: 60_000, poll: { intervalMs: 100, maxIntervalMs: 200 } },
    providers: { simulator: { baseUrl: simulatorUrl } },
    ui: { confirmAbove: 100 },
  });
}
