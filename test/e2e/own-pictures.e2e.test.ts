import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { ffmpegPath } from '../../main/media/binaries.ts';
import { CHROMIUM, hasChromium, openPage, serve, shot, simulatedFolder, simulatedHost, storedStoryboard, useBrowser } from '../helpers/browser.ts';
import { DAWN_DUSK } from '../helpers/boards.ts';
import { cli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';

if (!hasChromium) console.warn(`browser tests skipped: no Chromium at ${CHROMIUM} (install chromium or set CHROMIUM_PATH)`);

const browser = useBrowser();

const BOARD = DAWN_DUSK;

/** A real picture made by ffmpeg, in a colour of its own. */
function picture(path: string, colour: string): string {
  expect(spawnSync(ffmpegPath(), ['-v', 'error', '-f', 'lavfi', '-i', `color=c=${colour}:s=320x180`, '-frames:v', '1', '-y', path]).status).toBe(0);
  return path;
}

const sceneOf = (saved: string, id: string) => (JSON.parse(saved) as { scenes: { id: string; image?: unknown; clip?: unknown }[] }).scenes.find((s) => s.id === id)!;

/** Drops a file on an element as a person dragging it from their desktop would. */
async function drop(page: Page, testId: string, path: string, type: string) {
  const bytes = [...readFileSync(path)];
  const name = path.split('/').pop()!;
  const transfer = await page.evaluateHandle(
    ([b, n, t]) => {
      const data = new DataTransfer();
      data.items.add(new File([new Uint8Array(b as number[])], n as string, { type: t as string }));
      return data;
    },
    [bytes, name, type] as const,
  );
  await page.getByTestId(testId).dispatchEvent('dragover', { dataTransfer: transfer });
  await page.getByTestId(testId).dispatchEvent('drop', { dataTransfer: transfer });
}

describe.skipIf(!hasChromium)('your own pictures in the app, in Chromium', () => {
  it('a picture picked or dropped on a scene becomes its still, marked yours, saved with its revision; a text file is refused and changes nothing', async () => {
    const { sim, dataDir, host, url } = await simulatedHost(50, { name: 'Fox', storyboard: BOARD });
    const { page, errors } = await openPage(browser(), url, { width: 1280, height: 900 });

    // Not a picture: refused in plain words, and the storyboard is as it was.
    const notes = join(tempDir(), 'notes.png');
    writeFileSync(notes, 'only words\n');
    const before = storedStoryboard(dataDir, 'Fox');
    await page.getByLabel('Your own picture for dawn').setInputFiles(notes);
    await expect.poll(() => page.getByTestId('own-dawn').getByRole('alert').textContent()).toBe('scene "dawn": notes.png is not a PNG, JPEG or WebP picture; give a still in one of those formats');
    expect(storedStoryboard(dataDir, 'Fox')).toBe(before);

    const orange = picture(join(tempDir(), 'my-fox.png'), 'orange');
    await page.getByLabel('Your own picture for dawn').setInputFiles(orange);
    const still = page.getByRole('img', { name: 'your picture for dawn' });
    await still.waitFor();
    await expect.poll(() => still.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(320);
    expect(await page.getByTestId('own-dawn').textContent()).toContain('yours');
    const sum = createHash('sha256').update(readFileSync(orange)).digest('hex');
    await expect.poll(() => JSON.stringify(sceneOf(storedStoryboard(dataDir, 'Fox'), 'dawn').image ?? null)).toContain(sum);

    // A drop on the other scene does the same.
    const blue = picture(join(tempDir(), 'dusk.png'), 'blue');
    await drop(page, 'scene-1', blue, 'image/png');
    await page.getByRole('img', { name: 'your picture for dusk' }).waitFor();
    const blueSum = createHash('sha256').update(readFileSync(blue)).digest('hex');
    await expect.poll(() => JSON.stringify(sceneOf(storedStoryboard(dataDir, 'Fox'), 'dusk').image ?? null)).toContain(blueSum);
    expect(JSON.stringify(sceneOf(storedStoryboard(dataDir, 'Fox'), 'dawn').image)).toContain(sum);
    // The estimate shows both images as yours: nothing is bought for them.
    const dawnRow = page.getByRole('row', { name: /^dawn:image/ });
    await expect.poll(() => dawnRow.textContent(), { timeout: 10_000 }).toBe('dawn:imageyours: nothing bought0.00 USDyours: my-fox.png');
    expect(await page.getByTestId('own-dawn').textContent()).toContain('yours my-fox.png: nothing is bought');
    await page.getByTestId('scene-0').scrollIntoViewIfNeeded();
    await shot(page, 'own-picture');

    // The scene's preview shows the picture, marked yours, where a bought image would be; no empty "image" box.
    const preview = page.getByTestId('preview-dawn');
    const shown = preview.getByRole('img', { name: 'your picture in the preview of dawn' });
    await expect.poll(() => shown.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(320);
    expect(await preview.getByTestId('preview-yours-image').textContent()).toBe('yours my-fox.png');
    expect(await preview.locator('.preview-empty').allTextContents()).not.toContain('image');
    await preview.scrollIntoViewIfNeeded();
    await shot(page, 'own-picture-preview');

    expect((await cli(dataDir, 'estimate', 'Fox')).out).toMatch(/dawn:image\s+yours/);
    expect(errors).toEqual([]);
    expect(sim.charges).toEqual([]);
    host.child.kill('SIGKILL');
  }, 90_000);

  it('"Use in scene" in the library makes an image a scene\'s still and a clip a scene\'s shot', async () => {
    const { dataDir } = await simulatedFolder(50, { name: 'Fox', storyboard: BOARD });
    expect((await cli(dataDir, 'generate', 'Fox')).code).toBe(0);
    expect((await cli(dataDir, 'worker', '--until-idle')).code).toBe(0);
    const tasks = JSON.parse((await cli(dataDir, 'tasks', '--json')).out) as { id: number; kind: string; input: { prompt?: string } }[];
    const image = tasks.find((t) => t.kind === 'image' && t.input.prompt === 'a red fox asleep in snow')!;
    const clip = tasks.find((t) => t.kind === 'clip' && t.input.prompt === 'pan left')!;
    const { host, url } = await serve(dataDir);
    const { page, errors } = await openPage(browser(), url, { width: 1280, height: 900 });

    await page.getByRole('button', { name: 'Library', exact: true }).click();
    await page.getByRole('button', { name: `Use the image of task ${image.id} in a scene` }).click();
    const dialog = page.getByTestId('use-in-scene');
    await dialog.getByLabel('Scene to use it in').selectOption('dusk');
    await shot(page, 'use-in-scene');
    await dialog.getByRole('button', { name: 'Use in scene dusk' }).click();
    await expect.poll(() => page.getByTestId('used-in-scene').textContent()).toBe(`The image of task ${image.id} is now scene dusk's image in Fox; nothing is bought for it.`);
    expect(sceneOf(storedStoryboard(dataDir, 'Fox'), 'dusk').image).toEqual({ task: image.id });

    await page.getByRole('button', { name: `Use the clip of task ${clip.id} in a scene` }).click();
    await dialog.getByLabel('Scene to use it in').selectOption('dawn');
    await dialog.getByRole('button', { name: 'Use in scene dawn' }).click();
    await expect.poll(() => page.getByTestId('used-in-scene').textContent()).toContain(`scene dawn's clip`);
    expect(sceneOf(storedStoryboard(dataDir, 'Fox'), 'dawn').clip).toEqual({ task: clip.id });
    // Its preview shows that clip, marked yours, in place of both the image and the clip it would buy.
    await page.getByRole('button', { name: 'Storyboard', exact: true }).click();
    const dawn = page.getByTestId('preview-dawn');
    await expect.poll(() => dawn.getByLabel('your clip in the preview of dawn').evaluate((v: HTMLVideoElement) => v.readyState >= 1 && v.videoWidth)).toBeGreaterThan(0);
    expect(await dawn.getByTestId('preview-yours-clip').textContent()).toBe(`yours task ${clip.id}`);
    expect(await dawn.locator('.preview-empty').count()).toBe(0);
    await dawn.scrollIntoViewIfNeeded();
    await shot(page, 'own-clip-preview');

    // Nothing is bought for either: the estimate shows both as yours, and only the render is new.
    const estimate = (await cli(dataDir, 'estimate', 'Fox')).out;
    expect(estimate).toMatch(new RegExp(`dusk:image\\s+yours\\s+yours\\s+task ${image.id}`));
    expect(estimate).toMatch(new RegExp(`dawn:clip\\s+yours\\s+yours\\s+task ${clip.id}`));
    expect(errors).toEqual([]);
    host.child.kill('SIGKILL');
  }, 90_000);
});
