import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ffmpegPath } from '../../main/media/binaries.ts';
import { CHROMIUM, hasChromium, openPage, shot, simulatedHost, storedStoryboard, useBrowser } from '../helpers/browser.ts';
import { DAWN_DUSK } from '../helpers/boards.ts';
import { cli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';

if (!hasChromium) console.warn(`browser tests skipped: no Chromium at ${CHROMIUM} (install chromium or set CHROMIUM_PATH)`);

const browser = useBrowser();

const BOARD = DAWN_DUSK;

const sceneOf = (saved: string, id: string) => (JSON.parse(saved) as { scenes: { id: string; image?: unknown; clip?: unknown }[] }).scenes.find((s) => s.id === id)!;

describe.skipIf(!hasChromium)('your own clip in the app, in Chromium', () => {
  it('"Use your own picture or clip" takes a video: the scene\'s clip is set to the copy, shown playing in its preview, and nothing is bought for it', async () => {
    const { sim, dataDir, url } = await simulatedHost(50, { name: 'Fox', storyboard: BOARD });
    // A 2 s green clip with sound, as a creator's phone might give.
    const mine = join(tempDir(), 'my-walk.mp4');
    const made = spawnSync(ffmpegPath(), [
      '-v', 'error', '-f', 'lavfi', '-i', 'color=c=green:s=320x180:r=12:d=2', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=2',
      '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', '-y', mine,
    ]);
    expect(made.status, made.stderr.toString()).toBe(0);

    const { page, errors } = await openPage(browser(), url, { width: 1280, height: 900 });

    await page.getByTestId('own-dawn').getByRole('button', { name: 'Use your own picture or clip' }).waitFor();
    await page.getByLabel('Your own picture for dawn').setInputFiles(mine);
    const sum = createHash('sha256').update(readFileSync(mine)).digest('hex');
    await expect.poll(() => JSON.stringify(sceneOf(storedStoryboard(dataDir, 'Fox'), 'dawn').clip ?? null), { timeout: 10_000 }).toContain(sum);
    const dawn = sceneOf(storedStoryboard(dataDir, 'Fox'), 'dawn');
    expect(dawn.image).toBeUndefined();
    expect(dawn.clip).toMatchObject({ sha256: sum, name: 'my-walk.mp4' });

    // The scene says the clip is yours, and its preview plays the copy.
    await expect.poll(() => page.getByTestId('own-dawn').textContent()).toContain("yours clip: my-walk.mp4; nothing is bought for this scene's image or clip");
    const video = page.getByTestId('preview-dawn').locator('video');
    await expect.poll(() => video.evaluate((v: HTMLVideoElement) => v.readyState >= 1 && Math.round(v.duration)), { timeout: 10_000 }).toBe(2);
    const clipRow = page.getByRole('row', { name: /^dawn:clip/ });
    await expect.poll(() => clipRow.textContent(), { timeout: 10_000 }).toContain('yours: my-walk.mp4; the scene lasts all 2.0 s of it, not the 1 s written; its sound kept');
    await page.getByTestId('scene-0').scrollIntoViewIfNeeded();
    await shot(page, 'own-clip-upload');

    // The estimate buys nothing for dawn's image or clip; a Generate charges only dusk's.
    expect((await cli(dataDir, 'estimate', 'Fox')).out).toMatch(/dawn:clip\s+yours/);
    expect((await cli(dataDir, 'generate', 'Fox')).code).toBe(0);
    expect((await cli(dataDir, 'worker', '--until-idle')).code).toBe(0);
    expect(sim.charges.map((c) => c.kind).sort()).toEqual(['clip', 'image']);
    expect(errors).toEqual([]);
  }, 90_000);
});
