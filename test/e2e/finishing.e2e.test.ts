import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasChromium, openPage, shot, simulatedHost, storedStoryboard, useBrowser } from '../helpers/browser.ts';
import { chordFile } from '../helpers/film.ts';
import { tempDir } from '../helpers/tmp.ts';
import { lighthouse } from '../helpers/boards.ts';

const browser = useBrowser();

const BOARD = lighthouse(640, 360, 12, 2);

interface Stored {
  transition?: unknown;
  subtitles?: unknown;
  music?: unknown;
  loudness?: unknown;
  scenes: { transition?: unknown }[];
}

describe.skipIf(!hasChromium)('finishing the film in the app, in Chromium', () => {
  it('a crossfade, a scene\'s own fade, burned subtitles and uploaded music are saved as the studio reads them, foreseen in the estimate, and the film plays with its subtitles track', async () => {
    const { sim, dataDir, host, url } = await simulatedHost(50, { name: 'Keeper', storyboard: BOARD });
    const { page, errors } = await openPage(browser(), url, { width: 1366, height: 900 });
    try {
      const finishing = page.getByTestId('finishing');
      await finishing.waitFor();
      // Untouched, the estimate foresees plain cuts, subtitles as a track, no music, -14 LUFS.
      await expect.poll(() => page.getByTestId('film-note').textContent(), { timeout: 10_000 }).toMatch(/; plain cuts between scenes; subtitles beside it and as a track to turn on; no music; the sound at -14 LUFS$/);
      await shot(finishing, 'finishing-default');
      // The last scene has no cut after it.
      expect(await page.getByLabel('Cut after home').count()).toBe(0);

      await page.getByLabel('Cut between scenes').selectOption('crossfade');
      expect(await page.getByLabel('Seconds of each cut').inputValue()).toBe('0.5');
      await page.getByLabel('Cut after sea').selectOption('fade-black');
      await finishing.getByLabel('Burn them into the picture').check();
      const bed = chordFile(join(tempDir(), 'bed.m4a'), 4);
      await page.getByLabel('Music file').setInputFiles(bed);
      await expect.poll(() => page.getByTestId('music-name').textContent(), { timeout: 20_000 }).toBe('♪ bed.m4a');
      expect(await page.getByLabel('Music level under the voice').inputValue()).toBe('-12');
      expect(await page.getByLabel('Loudness target').inputValue()).toBe('-14');
      await finishing.scrollIntoViewIfNeeded();
      await shot(finishing, 'finishing');
      await shot(page.getByTestId('scene-1'), 'finishing-scene-cut');
      // In a small window the section keeps to the editor's column, its Save button under it.
      await page.setViewportSize({ width: 1024, height: 640 });
      await page.getByRole('button', { name: 'Save storyboard' }).scrollIntoViewIfNeeded();
      const section = (await finishing.boundingBox())!;
      expect(section.x + section.width).toBeLessThanOrEqual((await page.getByTestId('scene-0').boundingBox())!.x + (await page.getByTestId('scene-0').boundingBox())!.width + 1);
      await shot(page, 'finishing-small-window');
      await page.setViewportSize({ width: 1366, height: 900 });

      await page.getByRole('button', { name: 'Save storyboard' }).click();
      const sum = createHash('sha256').update(readFileSync(bed)).digest('hex');
      await expect.poll(() => (JSON.parse(storedStoryboard(dataDir, 'Keeper')) as Stored).subtitles ?? null).toEqual({ burn: true });
      const stored = JSON.parse(storedStoryboard(dataDir, 'Keeper')) as Stored;
      expect(stored.transition).toEqual({ type: 'crossfade', duration: 0.5 });
      expect(stored.music).toEqual({ file: join(dataDir, 'projects', '1', 'media', `own-${sum}.m4a`), sha256: sum, name: 'bed.m4a', volume: -12 });
      // Left at its default, the loudness is not written; only the scene given its own cut has one.
      expect('loudness' in stored).toBe(false);
      expect(stored.scenes.map((s) => s.transition ?? null)).toEqual([null, { type: 'fade-black', duration: 0.5 }, null]);

      const film = page.getByTestId('film-note');
      await expect.poll(() => film.textContent(), { timeout: 10_000 }).toMatch(
        /^The film: about \d+\.\d s \(\d+\.\d s of scenes, 0\.5 s of them shown through crossfades\); 1 crossfade and 1 fade through black between scenes; subtitles burned in and beside it; music under the voice \(yours: bed\.m4a[^)]*12 LU under it, lower while someone speaks\); the sound at -14 LUFS$/,
      );
      await shot(page.getByTestId('estimate'), 'finishing-estimate');

      await page.getByTestId('generate').click();
      const player = page.getByTestId('final-player');
      await player.waitFor({ timeout: 90_000 });
      await expect.poll(() => player.evaluate((v: HTMLVideoElement) => v.readyState), { timeout: 20_000 }).toBeGreaterThanOrEqual(1);
      // Burned into the picture, the words are not shown twice: the track is there, off until the viewer turns it on.
      const track = player.locator('track');
      expect(await track.getAttribute('kind')).toBe('subtitles');
      expect(await track.getAttribute('src')).toMatch(/^\/media\/\d+\/subtitles\.vtt\?token=/);
      expect(await track.getAttribute('default')).toBeNull();
      await player.evaluate((v: HTMLVideoElement) => void (v.textTracks[0]!.mode = 'hidden'));
      const cues = () => player.evaluate((v: HTMLVideoElement) => [...(v.textTracks[0]!.cues ?? [])].map((c) => ({ start: c.startTime, end: c.endTime, text: (c as VTTCue).text })));
      await expect.poll(async () => (await cues()).map((c) => c.text), { timeout: 15_000 }).toEqual(['At dawn, the keeper climbs the stairs.', 'Out at sea, a small boat waits.']);

      // The picture at the middle of the first cue carries the burned subtitle.
      const first = (await cues())[0]!;
      await player.evaluate((v: HTMLVideoElement) => void (v.textTracks[0]!.mode = 'disabled'));
      await player.evaluate((v: HTMLVideoElement, at: number) => new Promise((done) => {
        v.addEventListener('seeked', done, { once: true });
        v.currentTime = at;
      }), (first.start + first.end) / 2);
      await expect.poll(() => player.evaluate((v: HTMLVideoElement) => v.readyState), { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
      await page.getByTestId('final-video').scrollIntoViewIfNeeded();
      await shot(page.getByTestId('final-video'), 'finishing-player');
      // Without the paused player's control bar over it, as it shows while the film plays.
      await player.evaluate((v: HTMLVideoElement) => void (v.controls = false));
      await shot(player, 'finishing-player-burned');
      await player.evaluate((v: HTMLVideoElement) => void (v.controls = true));
      expect(errors).toEqual([]);
      expect(sim.charges.length).toBeGreaterThan(0);
    } finally {
      await page.close();
      host.child.kill('SIGTERM');
      await host.exited;
    }
  }, 180_000);
});
