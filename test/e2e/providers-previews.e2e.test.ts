import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../main/simulator/server.ts';
import { falQueue, realMedia, type Ledger } from '../fakes/providers.ts';
import { startFake } from '../fakes/server.ts';
import { hasChromium, serve, useBrowser } from '../helpers/browser.ts';
import { writeSettings } from '../helpers/processes.ts';
import { tempDir } from '../helpers/tmp.ts';

const SHOTS = 'test-results/screenshots';

const browser = useBrowser();
beforeAll(() => mkdirSync(SHOTS, { recursive: true }));

const shot = (page: Page, name: string) => page.screenshot({ path: `${SHOTS}/${name}.png` });

describe.skipIf(!hasChromium)('providers, previews and the finished video in Chromium, through the loopback host', () => {
  let sim: RunningSimulator;
  afterAll(async () => sim?.close());

  it('fal for images with a key, the video size set, Generate, scenes filling in, the large player, export and import', async () => {
    sim = await startSimulator({ jobMs: 800 });
    const ledger: Ledger = { charged: [] };
    // fal's queue API on loopback (test/fakes/providers.ts): each image is at "fal" for 5 s, so the clips wait for it.
    const fal = await startFake(falQueue(ledger, (await realMedia()).png, { jobMs: 5_000 }));
    const dataDir = tempDir();
    writeSettings(dataDir, {
      engine: { tickMs: 100, leaseMs: 60_000, poll: { intervalMs: 100, maxIntervalMs: 200 } },
      providers: { simulator: { baseUrl: sim.url } },
    });
    const { host, url } = await serve(dataDir, { STUDIO_FAL_BASE_URL: fal.url, FAL_KEY: '' });
    const context = await browser().newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(url);

    await page.getByLabel('New project name').fill('Dawn film');
    await page.getByRole('button', { name: 'Create' }).click();

    // fal without a key is offered all the same, saying where to add one.
    const imageModel = page.getByLabel('Images model for project');
    const falFlux = await imageModel.locator('option', { hasText: 'fal: FLUX.1 [dev]' }).textContent();
    expect(falFlux).toBe('fal: FLUX.1 [dev] (0.025 USD per megapixel), add a key in Settings');
    await imageModel.selectOption({ label: falFlux! });
    await expect.poll(() => page.getByTestId('needs-key').textContent()).toBe('fal has no key: add a key in Settings.');
    await page.click('[data-tab=settings]');
    await page.getByLabel('fal key').fill('fal-test-key');
    await page.getByRole('button', { name: 'Save key' }).first().click();
    await page.getByText('set (settings)').first().waitFor();
    await page.click('[data-tab=storyboard]');
    await expect.poll(() => page.getByTestId('needs-key').count()).toBe(0);
    // Its price, where the figure comes from, and what it takes, from the model's input schema.
    const facts = page.getByTestId('project-image').getByTestId('model-facts');
    await expect.poll(() => facts.textContent()).toMatch(/0\.025 USD per megapixel.*flux-dev, read 2026-12-02.*Takes: image_size: square_hd, square, portrait_4_3/);
    await page.getByLabel('Images image_size for project', { exact: true }).selectOption('landscape_16_9');
    await page.getByLabel('Images num_images for project').fill('1');

    await page.getByLabel('Width', { exact: true }).fill('640');
    await page.getByLabel('Height', { exact: true }).fill('360');
    await page.getByLabel('Frames per second').fill('12');
    await page.getByLabel('Scene name').fill('dawn');
    await page.getByLabel('Image prompt').fill('a red fox asleep in snow');
    await page.getByLabel('Narration').fill('At dawn, the fox wakes.');
    await page.getByLabel('seconds').fill('1');
    await page.getByRole('button', { name: 'Add scene' }).click();
    await page.getByLabel('Scene name').nth(1).fill('dusk');
    await page.getByLabel('Image prompt').nth(1).fill('the fox trotting home');
    await page.getByLabel('seconds').nth(1).fill('1');
    // The second scene's images come from the simulator: a scene overrides the project's choice.
    await page.getByTestId('scene-1').getByText('Models for this scene').click();
    await page.getByLabel('Images model for dusk').selectOption({ label: 'The simulator: Simulator image (0.04 USD per image)' });
    await page.getByRole('button', { name: 'Save storyboard' }).click();
    await expect.poll(() => page.getByTestId('estimate').textContent()).toMatch(/dawn:image.*fal.*dusk:image.*simulator/);
    await page.getByRole('region', { name: 'Video and models for the whole project' }).evaluate((e) => e.scrollIntoView());
    await shot(page, 'storyboard-models');

    // A second tab on the task board, to see a waiting task there too.
    const tasks = await context.newPage();
    await tasks.goto(url);
    await tasks.click('[data-tab=tasks]');

    await page.getByTestId('generate').click();
    await expect.poll(() => page.getByTestId('generate-started').textContent()).toMatch(/^The last Generate, at [0-9:]+( [AP]M)?, started 6 steps for about 0\.\d{2,6} USD, of which 0\.\d{2,6} USD simulated \(never charged\)\. The scenes fill in/);
    const dawnClip = page.getByTestId('step-dawn:clip');
    await Promise.all([
      expect.poll(() => dawnClip.textContent(), { timeout: 10_000 }).toBe('clip waiting for: image of dawn'),
      expect.poll(() => tasks.getByTestId('waiting-for').allTextContents(), { timeout: 10_000 }).toContain('waiting for: image of dawn'),
    ]);
    expect(await dawnClip.locator('progress').count()).toBe(0);
    await page.getByTestId('scene-0').evaluate((e) => e.scrollIntoView());
    await shot(page, 'storyboard-filling-in');
    await tasks.screenshot({ path: `${SHOTS}/tasks-waiting.png` });

    // The previews fill in: the image as a thumbnail, the clip playable, the narration with its controls.
    const image = page.getByRole('img', { name: 'image of dawn' });
    await image.waitFor({ timeout: 30_000 });
    await expect.poll(() => image.evaluate((i: HTMLImageElement) => i.complete && i.naturalWidth > 0)).toBe(true);
    const clip = page.getByRole('group', { name: 'Preview of dawn' }).locator('video');
    await clip.waitFor({ timeout: 30_000 });
    await expect.poll(() => clip.evaluate((v: HTMLVideoElement) => v.readyState >= 1 && v.duration > 0), { timeout: 10_000 }).toBe(true);
    expect(await page.getByLabel('narration of dawn').evaluate((a: HTMLAudioElement) => a.controls)).toBe(true);
    expect(ledger.charged).toHaveLength(1);

    // The finished video in a player of a real size, that plays.
    const player = page.getByTestId('final-player');
    await player.waitFor({ timeout: 60_000 });
    await player.scrollIntoViewIfNeeded();
    const box = (await player.boundingBox())!;
    expect(box.width).toBeGreaterThanOrEqual(640);
    expect(box.height).toBeGreaterThanOrEqual(300);
    expect(await player.evaluate((v: HTMLVideoElement) => v.controls)).toBe(true);
    await player.evaluate(async (v: HTMLVideoElement) => {
      v.muted = true;
      await v.play();
    });
    await expect.poll(() => player.evaluate((v: HTMLVideoElement) => v.currentTime), { timeout: 10_000 }).toBeGreaterThan(0.2);
    await player.evaluate((v: HTMLVideoElement) => v.pause());
    expect(await page.getByTestId('step-dusk:clip').getAttribute('data-state')).toBe('ready');
    await shot(page, 'final-video');

    // In a browser, the video downloads under the project's name, as an MP4.
    const [video] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download' }).click()]);
    expect(video.suggestedFilename()).toBe('Dawn film.mp4');
    expect(readFileSync((await video.path())!).subarray(4, 8).toString()).toBe('ftyp');

    // Export, change, import: the studio checks an imported file as any save, and shows what is wrong.
    await page.getByRole('button', { name: 'Export storyboard' }).scrollIntoViewIfNeeded();
    const [exported] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export storyboard' }).click()]);
    expect(exported.suggestedFilename()).toBe('Dawn film.storyboard.json');
    const board = JSON.parse(readFileSync((await exported.path())!, 'utf8'));
    expect(board).toMatchObject({ width: 640, height: 360, fps: 12, steps: { image: { provider: 'fal', model: 'fal-ai/flux/dev', options: { image_size: 'landscape_16_9', num_images: 1 } } } });
    expect(board.scenes[1].steps.image).toEqual({ provider: 'simulator', model: 'sim-image-1' });
    const dir = tempDir();
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ ...board, fps: 120 }));
    await page.getByLabel('Storyboard file to import').setInputFiles(join(dir, 'bad.json'));
    await expect.poll(() => page.getByTestId('storyboard-file-error').textContent()).toBe('fps: must be a whole number from 1 to 60');
    board.scenes[1].imagePrompt = 'the fox at its den';
    writeFileSync(join(dir, 'good.json'), JSON.stringify(board));
    await page.getByLabel('Storyboard file to import').setInputFiles(join(dir, 'good.json'));
    await expect.poll(() => page.getByLabel('Image prompt').nth(1).inputValue()).toBe('the fox at its den');
    expect(await page.getByTestId('storyboard-file-error').count()).toBe(0);
    await expect.poll(() => page.getByTestId('step-dusk:image').getAttribute('data-state')).toBe('not generated');

    expect(errors).toEqual([]);
    host.child.kill('SIGTERM');
    await host.exited;
  }, 150_000);
});
