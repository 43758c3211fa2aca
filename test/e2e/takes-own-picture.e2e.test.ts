import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ffmpegPath } from '../../main/media/binaries.ts';
import { hasChromium, openPage, serve, shot, simulatedFolder, storedStoryboard, useBrowser } from '../helpers/browser.ts';
import { cli, storyboardRevision } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';

const browser = useBrowser();

const SCENES = [
  { id: 'dawn', imagePrompt: 'a red fox asleep in snow', motionPrompt: 'push in', duration: 1 },
  { id: 'home', imagePrompt: 'the fox trotting home', motionPrompt: 'track', duration: 1 },
];

async function made(dataDir: string, ...args: string[]) {
  const run = await cli(dataDir, ...args);
  expect(run.code, run.err).toBe(0);
  expect((await cli(dataDir, 'worker', '--until-idle')).code).toBe(0);
}

describe.skipIf(!hasChromium)('the takes of a scene with your own picture, in Chromium', () => {
  it('the strip says your picture is used, marks no take, offers a new clip only; "Pick" puts take 1 back, buying nothing', async () => {
    const { sim, dataDir } = await simulatedFolder(50, { name: 'Fox', storyboard: { width: 320, height: 180, fps: 12, scenes: SCENES } });
    const file = join(dataDir, 'board.json');
    await made(dataDir, 'generate', 'Fox');
    // The creator's own picture replaces the still bought for dawn, and a Generate makes its clip from it.
    const png = join(tempDir(), 'mine.png');
    expect(spawnSync(ffmpegPath(), ['-v', 'error', '-f', 'lavfi', '-i', 'color=c=orange:s=320x180', '-frames:v', '1', '-y', png]).status).toBe(0);
    writeFileSync(file, JSON.stringify({ width: 320, height: 180, fps: 12, scenes: [{ ...SCENES[0], image: { file: png } }, SCENES[1]] }));
    expect((await cli(dataDir, 'storyboard', 'edit', 'Fox', '--file', file, '--revision', await storyboardRevision(dataDir, 'Fox'))).code).toBe(0);
    await made(dataDir, 'generate', 'Fox');

    const { host, url } = await serve(dataDir);
    const { page, errors } = await openPage(browser(), url, { width: 1280, height: 800 });

    const strip = page.getByTestId('takes-dawn');
    await expect.poll(() => page.getByTestId('takes-yours-dawn').textContent(), { timeout: 15_000 }).toMatch(/^Your own picture \(mine\.png\) is used in the render, not a take\./);
    expect(await strip.locator('[aria-current=true]').count()).toBe(0);
    expect(await page.getByTestId('take-dawn-1').textContent()).not.toContain('in the render');
    expect(await page.getByTestId('take-home-1').getAttribute('aria-current')).toBe('true');
    // A new take of a scene with its own still makes its clip only: the one choice offered.
    expect(await strip.getByRole('combobox', { name: 'What a new take of dawn makes again' }).locator('option').allTextContents()).toEqual(['Clip only (keep the still)']);
    // Clips made from your own still are no takes to compare, so no variations are offered for it.
    expect(await strip.getByRole('spinbutton', { name: 'Variations of a new take of dawn' }).count()).toBe(0);
    await strip.scrollIntoViewIfNeeded();
    await shot(page, 'takes-own-picture');

    const charges = sim.charges.length;
    await strip.getByRole('button', { name: 'Pick take 1 of dawn' }).click();
    await expect.poll(() => strip.getByRole('status').textContent()).toBe(
      'Take 1 is back in the render in place of your own picture (mine.png), which the storyboard no longer names. Nothing was bought; the next Generate renders this take.',
    );
    await expect.poll(() => page.getByTestId('take-dawn-1').getAttribute('aria-current')).toBe('true');
    expect(await page.getByTestId('takes-yours-dawn').count()).toBe(0);
    expect(await strip.getByRole('combobox', { name: 'What a new take of dawn makes again' }).locator('option').count()).toBe(3);
    expect(await strip.getByRole('spinbutton', { name: 'Variations of a new take of dawn' }).count()).toBe(1);
    const dawn = (JSON.parse(storedStoryboard(dataDir, 'Fox')) as { scenes: { id: string; image?: unknown; take: number }[] }).scenes[0]!;
    expect(dawn).toMatchObject({ id: 'dawn', take: 1 });
    expect(dawn.image).toBeUndefined();
    await shot(page, 'takes-own-picture-picked');
    expect(sim.charges).toHaveLength(charges);
    expect(errors).toEqual([]);
    host.child.kill('SIGTERM');
    await host.exited;
  }, 90_000);
});
