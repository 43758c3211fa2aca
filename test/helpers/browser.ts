import Database from 'better-sqlite3';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import type { RunningSimulator } from '../../main/simulator/server.ts';
import { cli } from './cli.ts';
import { startStudio, writeSettings, type StudioProcess } from './processes.ts';
import { simulatorForTest } from './running.ts';
import { tempDir } from './tmp.ts';

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

/**
 * A data folder for a page test on a simulator of its own (stopped when the test ends), with quick settings and,
 * when `board` is given, that storyboard made as project `name`.
 */
export async function simulatedFolder(jobMs: number, board?: { name: string; storyboard: object }): Promise<{ sim: RunningSimulator; dataDir: string }> {
  const sim = await simulatorForTest({ jobMs });
  const dataDir = tempDir();
  quickSimulatorSettings(dataDir, sim.url);
  if (board) {
    const file = join(dataDir, 'board.json');
    writeFileSync(file, JSON.stringify(board.storyboard));
    expect((await cli(dataDir, 'storyboard', 'create', board.name, '--file', file)).code).toBe(0);
  }
  return { sim, dataDir };
}

/** `simulatedFolder`, served by `studio serve`. */
export async function simulatedHost(jobMs: number, board?: { name: string; storyboard: object }) {
  const folder = await simulatedFolder(jobMs, board);
  return { ...folder, ...(await serve(folder.dataDir)) };
}

/** A new page of `browser` at `url`, the errors it throws kept in `errors`. */
export async function openPage(browser: Browser, url: string, viewport: { width: number; height: number }): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(url);
  return { page, errors };
}

export const SHOTS = 'test-results/screenshots';

/** A photograph of a page or part of one, kept as SHOTS/`name`.png for a person to look at. */
export async function shot(target: Page | Locator, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  const path = join(SHOTS, `${name}.png`);
  await ('goto' in target ? target.screenshot({ path, ...options }) : target.screenshot({ path }));
}
