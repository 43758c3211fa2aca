import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pageGoneAction, RELOADS_PER_MINUTE } from '../app/crashes.ts';
import { allowPermission } from '../app/permissions.ts';
import { LINE_START } from '../main/logging/logLine.ts';
import { tempDir } from './helpers/tmp.ts';

const ROOT = join(import.meta.dirname, '..');

describe('when the window page dies', () => {
  it('is loaded again, up to three times a minute; a clean exit is no crash', () => {
    const at = Date.parse('2025-05-01T10:00:00Z');
    expect(pageGoneAction('clean-exit', [], at)).toEqual({ action: 'ignore', deaths: [] });
    let deaths: number[] = [];
    const actions = [0, 10_000, 20_000, 30_000].map((after) => {
      const decided = pageGoneAction('crashed', deaths, at + after);
      deaths = decided.deaths;
      return decided.action;
    });
    expect(RELOADS_PER_MINUTE).toBe(3);
    expect(actions).toEqual(['reload', 'reload', 'reload', 'give up']);
    // Deaths more than a minute ago are forgotten: a page that fails now and then is always loaded again.
    expect(pageGoneAction('oom', [at, at + 1_000, at + 2_000], at + 61_500)).toEqual({ action: 'reload', deaths: [at + 2_000, at + 61_500] });
    expect(pageGoneAction('killed', [at, at + 1_000, at + 2_000], at + 3_000).action).toBe('give up');
  });
});

/** The crash wiring under the Electron stand-in (test/helpers/crashHarness.ts), with what it reported and logged. */
async function harness(env: Record<string, string>) {
  const data = tempDir();
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', './test/fakes/electron/loader.mjs', 'test/helpers/crashHarness.ts'], {
    cwd: ROOT,
    env: { ...process.env, HARNESS_DATA: data, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  const events = [...stderr.matchAll(/^electron-standin: (\w+) (.*)$/gm)].map((m) => ({ event: m[1]!, detail: JSON.parse(m[2]!) as Record<string, unknown> }));
  const file = join(data, 'logs', 'desktop.log');
  const log = existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => l.replace(LINE_START, '')) : [];
  return { code, events, log, stderr, data };
}

describe('the desktop, under the Electron stand-in', () => {
  it('keeps crash dumps on this machine: the crash reporter is started with no upload', async () => {
    const { code, events, log } = await harness({});
    expect(code).toBe(0);
    expect(events[0]).toEqual({ event: 'crashReporterStart', detail: { uploadToServer: false } });
    expect(log).toEqual([]);
  });

  it('loads a page that died again and tells the person once it is back, in the window, logging why', async () => {
    const { code, events, log } = await harness({ STANDIN_RENDERER_GONE: '1' });
    expect(code).toBe(0);
    const order = events.map((e) => e.event).filter((e) => ['loaded', 'renderProcessGone', 'reload', 'showMessageBox', 'showErrorBox'].includes(e));
    expect(order).toEqual(['loaded', 'renderProcessGone', 'reload', 'showMessageBox']);
    expect(events.find((e) => e.event === 'showMessageBox')!.detail).toMatchObject({
      type: 'warning',
      message: "Take Studio's window stopped and was opened again",
      detail: expect.stringContaining('paid requests in flight go on and nothing is bought twice'),
      attached: true,
    });
    expect(log).toEqual([expect.stringMatching(/^ERROR desktop\[\d+\] the window's page stopped \(crashed, exit code 139\); loading it again$/)]);
  });

  it('leaves a page that dies while the app quits unloaded, with no box over the quitting app', async () => {
    const { code, events, log } = await harness({ STANDIN_RENDERER_GONE: '1', HARNESS_QUIT_BEFORE_LOAD: '1' });
    expect(code).toBe(0);
    const order = events.map((e) => e.event).filter((e) => ['quit', 'loaded', 'renderProcessGone', 'reload', 'showMessageBox', 'showErrorBox', 'exit'].includes(e));
    expect(order).toEqual(['quit', 'loaded', 'renderProcessGone', 'quit', 'exit']);
    expect(log).toEqual([expect.stringMatching(/^ERROR desktop\[\d+\] the window's page stopped \(crashed, exit code 139\) as the app quits; not loading it again$/)]);
  });

  it('shows no box when the quit begins while a page that died is being loaded again', async () => {
    const { code, events } = await harness({ STANDIN_RENDERER_GONE: '1', STANDIN_QUIT_AFTER_LOAD: '1' });
    expect(code).toBe(0);
    const order = events.map((e) => e.event).filter((e) => ['quit', 'renderProcessGone', 'reload', 'showMessageBox', 'exit'].includes(e));
    expect(order).toEqual(['renderProcessGone', 'reload', 'quit', 'quit', 'exit']);
  });

  it('gives up on a page that keeps dying: says so with where the logs are, and quits as the app quits', async () => {
    const { code, events, log, data } = await harness({ STANDIN_RENDERER_GONE: '9' });
    expect(code).toBe(0);
    expect(events.filter((e) => e.event === 'reload')).toHaveLength(3);
    const shown = events.filter((e) => e.event === 'showErrorBox');
    expect(shown).toEqual([
      {
        event: 'showErrorBox',
        detail: {
          title: 'Take Studio keeps failing to show its window',
          content: expect.stringMatching(new RegExp(`^Its page stopped 4 times within a minute, .* nothing you paid for is lost\\. Start it again\\. If it happens again, send the logs in ${join(data, 'logs')}\\.$`)),
        },
      },
    ]);
    expect(events.findIndex((e) => e.event === 'quit')).toBeGreaterThan(events.findIndex((e) => e.event === 'showErrorBox'));
    expect(log.at(-1)).toMatch(/^ERROR desktop\[\d+\] the window's page stopped \(crashed, exit code 139\), the 4th time within a minute; not loading it again$/);
  });

  it('logs every error nothing caught in the main process, shows the first alone, and runs on', async () => {
    const { code, events, log } = await harness({ HARNESS_THROW: '1' });
    // It went on to its own quit, after all three.
    expect(code).toBe(0);
    const shown = events.filter((e) => e.event === 'showErrorBox');
    expect(shown).toHaveLength(1);
    expect(shown[0]!.detail.title).toBe('Take Studio hit an error');
    expect(shown[0]!.detail.content).toMatch(/^the first failure, with \[key\] in it\n\nThe studio goes on running; .* written to the log in .*logs, as any later one will be without this dialog\./);
    expect(log).toEqual([
      expect.stringMatching(/^ERROR desktop\[\d+\] an error nothing caught: Error: the first failure, with \[key\] in it\\n {4}at /),
      expect.stringMatching(/^ERROR desktop\[\d+\] an error nothing caught: Error: the second failure\\n/),
      expect.stringMatching(/^ERROR desktop\[\d+\] a rejection nothing handled: Error: a rejection nothing handled\\n/),
    ]);
    expect(log.join('\n')).not.toContain('sk-proj');
  });

  it('lets only the app page write to the clipboard, for Copy diagnostics, and read it never', () => {
    expect(allowPermission('clipboard-sanitized-write', 'app://studio/index.html')).toBe(true);
    expect(allowPermission('clipboard-sanitized-write', 'https://example.com/')).toBe(false);
    expect(allowPermission('clipboard-read', 'app://studio/index.html')).toBe(false);
  });
});
