import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readStoryboard } from '../main/domain/storyboard.ts';
import { newTake } from '../main/pipeline/newTakes.ts';
import { cli } from './helpers/cli.ts';
import { tempDir } from './helpers/tmp.ts';

const BOARD = { aspect: '9:16', resolution: 480, scenes: [{ id: 'a', imagePrompt: 'a red fox', motionPrompt: 'fox runs', duration: 2 }] };

async function run(dir: string, ...args: string[]) {
  const r = await cli(dir, ...args);
  expect(r.code, r.err).toBe(0);
  return r.out;
}

describe('a new take whose seeds an earlier take has', () => {
  it('is that take, picked and said so; the storyboard names it, and a take of the clip only starts from its still', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'sb.json'), JSON.stringify(BOARD));
    await run(dir, 'storyboard', 'create', 'P', '--file', join(dir, 'sb.json'));
    await run(dir, 'generate', 'P');
    await run(dir, 'generate', 'P', '--new-take', 'a', '--variations', '3', '--seed', '100');

    const again = await run(dir, 'generate', 'P', '--new-take', 'a', '--seed', '101');
    expect(again).toContain('a: take 3 already has seed 101: picked for the render');
    const takes = JSON.parse(await run(dir, 'takes', 'P', 'a', '--json')) as { take: number; picked: boolean; imageSeed: number; steps: { taskId: number }[] }[];
    expect(takes.map((t) => [t.take, t.imageSeed, t.picked])).toEqual([[1, takes[0]!.imageSeed, false], [2, 100, false], [3, 101, true], [4, 102, false]]);
    const scene = JSON.parse(await run(dir, 'storyboard', 'show', 'P', '--json')).scenes[0];
    expect(scene).toMatchObject({ take: 3, imageSeed: 101, clipSeed: 101 });
    // What the storyboard says is what was made: nothing new, the render included.
    expect(await run(dir, 'generate', 'P')).toContain('Nothing new to make');

    const clipOnly = await run(dir, 'generate', 'P', '--new-take', 'a', '--only', 'clip');
    expect(clipOnly).toMatch(new RegExp(`a:image\\s+reuse ${takes[2]!.steps[0]!.taskId}\\s`));
    expect(clipOnly).toContain('a: take 5, picked for the render');
  });
});

describe('seeds at the largest a storyboard holds', () => {
  it('wrap around to 0 rather than go past 2147483647, in variations and in a new take; the reader refuses larger', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'sb.json'), JSON.stringify(BOARD));
    await run(dir, 'storyboard', 'create', 'P', '--file', join(dir, 'sb.json'));
    await run(dir, 'generate', 'P');
    await run(dir, 'generate', 'P', '--new-take', 'a', '--seed', '2147483647', '--variations', '3');
    const takes = JSON.parse(await run(dir, 'takes', 'P', 'a', '--json')) as { take: number; imageSeed: number; clipSeed: number }[];
    expect(takes.slice(1).map((t) => [t.take, t.imageSeed, t.clipSeed])).toEqual([[2, 2_147_483_647, 2_147_483_647], [3, 0, 0], [4, 1, 1]]);
    await run(dir, 'pick', 'P', 'a', '4');
    expect(JSON.parse(await run(dir, 'storyboard', 'show', 'P', '--json')).scenes[0]).toMatchObject({ take: 4, imageSeed: 1, clipSeed: 1 });

    // A take number counted past the largest seed: written down wrapped, so it is what is sent.
    const [near] = readStoryboard({ scenes: [{ id: 'a', imagePrompt: 'a fox', duration: 2, seed: 2_147_483_000 }] }).scenes;
    expect(newTake(near!, 2, { only: 'both' })).toMatchObject({ take: 2, imageSeed: 2_147_490_919 - 2_147_483_648, clipSeed: 2_147_490_919 - 2_147_483_648 });
    expect(() => readStoryboard({ scenes: [{ id: 'a', imagePrompt: 'a fox', duration: 2, imageSeed: 2_147_483_648 }] })).toThrow(/imageSeed/);
  });
});
