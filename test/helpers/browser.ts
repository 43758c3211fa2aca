import { existsSync } from 'node:fs';
import { startStudio, type StudioProcess } from './processes.ts';

/** Debian's Chromium; the UI is driven in a real browser through the loopback host. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
export const hasChromium = existsSync(CHROMIUM);

/** Starts `studio serve` on a data folder and waits for the address it prints. */
export async function serve(dataDir: string, env: Record<string, string> = {}): Promise<{ host: StudioProcess; url: string }> {
  const host = startStudio(dataDir, ['serve'], env);
  for (let i = 0; i < 400 && !/Open (\S+)/.test(host.stdout()); i++) await new Promise((r) => setTimeout(r, 25));
  const url = /Open (\S+)/.exec(host.stdout())?.[1];
  if (!url) throw new Error(`the host did not start:\n${host.stderr()}`);
  return { host, url };
}
