import Database from 'better-sqlite3';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { axe, serious } from '../helpers/axe.ts';
import { hasChromium, shot, simulatedHost, useBrowser } from '../helpers/browser.ts';
import { lighthouse } from '../helpers/boards.ts';

const browser = useBrowser();

/** Big enough frames and long enough scenes that the render runs for seconds: time to watch it, and to cancel it. */
const BOARD = lighthouse(1920, 1080, 30, 6);

/**
 * The headless browser has no notification daemon, so window.Notification is replaced before the page's own
 * scripts run by one that keeps what it is asked to show, and whether permission was asked.
 */
const NOTIFICATION_STUB = () => {
  const w = window as unknown as { shown: { title: string; body?: string; tag?: string }[]; asked: number };
  w.shown = [];
  w.asked = 0;
  class Recorded {
    static permission: NotificationPermission = 'default';
    static async requestPermission(): Promise<NotificationPermission> {
      w.asked++;
      Recorded.permission = 'granted';
      return 'granted';
    }
    onclick: (() => void) | null = null;
    constructor(title: string, options?: NotificationOptions) {
      w.shown.push({ title, body: options?.body, tag: options?.tag });
    }
    close() {}
  }
  Object.defineProperty(window, 'Notification', { value: Recorded, configurable: true });
};

const shown = (page: Page) => page.evaluate(() => (window as unknown as { shown: { title: string; body?: string }[] }).shown);
const asked = (page: Page) => page.evaluate(() => (window as unknown as { asked: number }).asked);

/** The project's render tasks, newest first, as the database has them. */
function renders(dataDir: string): { id: number; status: string; preset: string | null }[] {
  const db = new Database(join(dataDir, 'studio.db'), { readonly: true });
  try {
    return db.prepare(`SELECT id, status, json_extract(input_json, '$.preset') AS preset FROM tasks WHERE kind = 'render' ORDER BY id DESC`).all() as never;
  } finally {
    db.close();
  }
}

describe.skipIf(!hasChromium)('watching the film render, in Chromium through the loopback host', () => {
  it('shows the render\'s percent and time left, cancels it leaving no file, says once when the next one is ready, plays it at the top, and exports a vertical film and a GIF preview to download', async () => {
    const { dataDir, host, url } = await simulatedHost(50, { name: 'Keeper', storyboard: BOARD });
    const page = await browser().newPage({ viewport: { width: 1366, height: 768 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.addInitScript(NOTIFICATION_STUB);
    try {
      await page.goto(url);
      await expect.poll(() => page.getByTestId('estimate-total').textContent()).toMatch(/New steps/);
      // Never asked on opening: only a click asks.
      expect(await asked(page)).toBe(0);
      await page.getByTestId('generate').click();
      await expect.poll(() => asked(page)).toBe(1);

      // The render under way, at the top of the page: its bar, its percent and the time left from its own pace.
      const progress = page.getByTestId('render-progress');
      await progress.waitFor({ timeout: 60_000 });
      await expect.poll(() => progress.getByTestId('render-left').textContent(), { timeout: 30_000 }).toMatch(/^ · about \d+ s left$/);
      // Well before its end, so the cancel below stops it mid-way.
      expect(Number((await progress.getByTestId('render-percent').textContent())!.replace('%', ''))).toBeLessThan(60);
      const bar = await progress.locator('progress').evaluate((p: HTMLProgressElement) => p.position);
      expect(bar).toBeGreaterThan(0);
      expect((await page.getByTestId('final-video').boundingBox())!.y).toBeLessThan((await page.getByTestId('scene-0').boundingBox())!.y);
      await page.getByTestId('final-video').scrollIntoViewIfNeeded();
      await shot(page, 'render-watch-progress');
      expect(serious(await axe(page))).toEqual([]);

      // Cancel: nothing paid is at stake, and it says so; the render stops and leaves no file behind.
      const cancel = progress.getByRole('button', { name: 'Cancel render' });
      expect(await cancel.getAttribute('title')).toMatch(/Nothing paid is at stake/);
      await cancel.click();
      await expect.poll(() => page.getByTestId('final-state').textContent(), { timeout: 15_000 }).toMatch(/^cancelled/);
      const [cancelled] = renders(dataDir);
      expect(cancelled!.status).toBe('CANCELLED');
      const folder = join(dataDir, 'projects', '1', 'renders');
      await expect.poll(() => readdirSync(folder).filter((f) => f.startsWith(`render-${cancelled!.id}`)), { timeout: 15_000 }).toEqual([]);
      expect(await shown(page)).toEqual([]);

      // Rendered again: it plays at the top of the page, whole above the fold, with its subtitles.
      await page.getByTestId('generate').click();
      const player = page.getByTestId('final-player');
      await player.waitFor({ timeout: 90_000 });
      await expect.poll(() => player.getAttribute('data-shape'), { timeout: 20_000 }).toBe('1920x1080');
      const box = (await player.boundingBox())!;
      expect(box.y + box.height).toBeLessThanOrEqual(768);
      expect(box.width).toBeGreaterThan(800);
      expect(await player.locator('track').getAttribute('kind')).toBe('subtitles');
      await expect.poll(() => shown(page), { timeout: 10_000 }).toEqual([{ title: 'Keeper', body: 'The finished film is ready to watch.', tag: expect.stringMatching(/^studio-render-\d+$/) }]);
      // Photographed a second and a half in, its first subtitle on the picture.
      await player.evaluate((v: HTMLVideoElement) => new Promise((done) => {
        v.addEventListener('seeked', done, { once: true });
        v.currentTime = 1.5;
      }));
      await expect.poll(() => player.evaluate((v: HTMLVideoElement) => [v.readyState >= 2, [...(v.textTracks[0]?.activeCues ?? [])].map((c) => (c as VTTCue).text)]), { timeout: 10_000 }).toEqual([true, ['At dawn, the keeper climbs the stairs.']]);
      await shot(page, 'render-watch-player');

      // Export as…: the six presets, each saying what it makes for this 1920 × 1080 film.
      await page.getByRole('button', { name: /^Export as…/ }).click();
      const menu = page.getByRole('list', { name: 'Export as' });
      expect(await menu.locator('button').allInnerTexts()).toEqual([
        expect.stringMatching(/^1080p 1920 × 1080 \(MP4\)\n/),
        expect.stringMatching(/^4K 3840 × 2160 \(MP4\)\n/),
        expect.stringMatching(/^Vertical 1080 × 1920 \(MP4\)\n/),
        expect.stringMatching(/^Square 1080 × 1080 \(MP4\)\n/),
        expect.stringMatching(/^WebM 1920 × 1080 \(VP9\)\n/),
        expect.stringMatching(/^GIF preview \(first 6 s, 480 × 270\)\n/),
      ]);
      // Photographed whole, in a window tall enough for the player and what is under it.
      await page.setViewportSize({ width: 1366, height: 1000 });
      await shot(page.getByTestId('final-video'), 'render-watch-export-menu');
      expect(serious(await axe(page))).toEqual([]);
      // A vertical export, then a GIF preview behind it (one render at a time): each listed with its progress.
      const vertical = page.locator('.export[data-preset="vertical"]');
      const gif = page.locator('.export[data-preset="gif-preview"]');
      await menu.locator('button[data-preset="vertical"]').click();
      // Once it is under way, the menu closes.
      await vertical.waitFor({ timeout: 10_000 });
      await expect.poll(() => menu.count()).toBe(0);
      await page.getByRole('button', { name: /^Export as…/ }).click();
      await menu.locator('button[data-preset="gif-preview"]').click();
      await expect.poll(() => vertical.getByTestId(/^export-progress-/).getByTestId('render-left').textContent(), { timeout: 30_000 }).toMatch(/about \d+ s left$/);
      expect(await gif.getByTestId(/^export-progress-/).textContent()).toMatch(/^queued: one render at a time/);
      await shot(page.getByTestId('final-video'), 'render-watch-exports-running');
      expect(serious(await axe(page))).toEqual([]);
      // In a small window each export keeps inside the player's card.
      await page.setViewportSize({ width: 1024, height: 640 });
      await vertical.scrollIntoViewIfNeeded();
      const card = (await page.getByTestId('final-video').boundingBox())!;
      for (const row of [vertical, gif]) {
        const b = (await row.boundingBox())!;
        expect(b.x + b.width).toBeLessThanOrEqual(card.x + card.width);
      }
      await shot(page, 'render-watch-exports-small');
      await page.setViewportSize({ width: 1366, height: 1000 });

      // Once made, each is a download named after the project and its preset, of the right kind of file.
      const fetched = (href: string) =>
        page.evaluate(async (href) => {
          const res = await fetch(href);
          const bytes = new Uint8Array(await res.arrayBuffer());
          return { status: res.status, type: res.headers.get('content-type'), head: String.fromCharCode(...bytes.slice(0, 12)), size: bytes.length };
        }, href);
      const gifLink = gif.getByRole('link', { name: 'Download Keeper - gif-preview.gif' });
      await gifLink.waitFor({ timeout: 90_000 });
      expect(await gifLink.getAttribute('download')).toBe('Keeper - gif-preview.gif');
      const gifFile = await fetched((await gifLink.getAttribute('href'))!);
      expect(gifFile).toMatchObject({ status: 200, type: 'image/gif', head: expect.stringMatching(/^GIF89a/) });
      expect(gifFile.size).toBeGreaterThan(10_000);
      const verticalLink = vertical.getByRole('link', { name: 'Download Keeper - vertical.mp4' });
      expect(await verticalLink.getAttribute('download')).toBe('Keeper - vertical.mp4');
      expect(await fetched((await verticalLink.getAttribute('href'))!)).toMatchObject({ status: 200, type: 'video/mp4', head: expect.stringMatching(/^....ftyp/) });
      expect(renders(dataDir).slice(0, 2)).toMatchObject([{ status: 'SUCCEEDED', preset: 'gif-preview' }, { status: 'SUCCEEDED', preset: 'vertical' }]);
      await shot(page.getByTestId('final-video'), 'render-watch-exports');
      // The film once, then each export once.
      await expect.poll(() => shown(page), { timeout: 10_000 }).toHaveLength(3);
      expect((await shown(page)).slice(1)).toMatchObject([
        { title: 'Keeper', body: 'The export Vertical 1080 × 1920 (MP4) is ready.' },
        { title: 'Keeper', body: 'The export GIF preview (first 6 s, 480 × 270) is ready.' },
      ]);

      // Opened again, the page says nothing of renders that were finished before it opened.
      await page.reload();
      await player.waitFor({ timeout: 20_000 });
      await page.waitForTimeout(1_500);
      expect(await shown(page)).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
      host.child.kill('SIGTERM');
      await host.exited;
    }
  }, 240_000);
});
