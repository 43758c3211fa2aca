import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readStoryboard } from '../main/domain/storyboard.ts';
import { ffmpegPath } from '../main/media/binaries.ts';
import { ownInScene, ownWords, withoutOwn } from '../main/pipeline/sceneOwnMedia.ts';
import { cli, storyboardRevision } from './helpers/cli.ts';
import { simulatedFolderForTest } from './helpers/running.ts';
import { tempDir } from './helpers/tmp.ts';

interface TakeJson {
  scene: string;
  take: number;
  picked: boolean;
  yours: { kind: string; name: string } | null;
  steps: { kind: string; taskId: number }[];
}
interface TaskJson {
  id: number;
  kind: string;
  status: string;
  input: { image_url?: unknown; scenes?: { id: string; clip: unknown }[] };
}

const SCENES = [
  { id: 'dawn', imagePrompt: 'a fox asleep in snow', duration: 1 },
  { id: 'home', imagePrompt: 'a den', duration: 1 },
];

async function made(dir: string, ...args: string[]) {
  const run = await cli(dir, ...args);
  expect(run.code, run.err).toBe(0);
  expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
  return run;
}

const takesOf = async (dir: string) => JSON.parse((await cli(dir, 'takes', 'Fox', '--json')).out) as TakeJson[];
const tasksOf = async (dir: string) => JSON.parse((await cli(dir, 'tasks', '--json')).out) as TaskJson[];
const lastRender = async (dir: string) => (await tasksOf(dir)).filter((t) => t.kind === 'render').sort((a, b) => b.id - a.id)[0]!;
const board = async (dir: string) => JSON.parse((await cli(dir, 'storyboard', 'show', 'Fox', '--json')).out) as { scenes: Record<string, unknown>[] };

describe('takes of a scene with your own picture', () => {
  it('names what a scene uses of yours: a file by the name it was sent with, a task or a take by its number', () => {
    const scenes = readStoryboard({
      scenes: [
        { id: 'a', imagePrompt: 'x', image: { file: 'C:\\shots\\fox.png' } },
        { id: 'b', imagePrompt: 'x', image: { file: '/shots/copy.png', name: 'my fox.png' } },
        { id: 'c', imagePrompt: 'x', clip: { task: 12 } },
        { id: 'd', imagePrompt: 'x', clip: { take: 2, scene: 'a' } },
        { id: 'e', imagePrompt: 'x' },
      ],
    }).scenes;
    expect(scenes.map((s) => ownInScene(s) && ownWords(ownInScene(s)!))).toEqual([
      'your own picture (fox.png)',
      'your own picture (my fox.png)',
      'your own clip (task 12)',
      'your own clip (take 2 of scene a)',
      null,
    ]);
    const { clip: _clip, ...rest } = scenes[2]!;
    expect(withoutOwn(scenes[2]!)).toStrictEqual(rest);
  });


  it('no bought take is in the render while the storyboard names your picture; a pick puts one back, buying nothing', async () => {
    const { sim, dir } = await simulatedFolderForTest();
    const file = join(dir, 'board.json');
    writeFileSync(file, JSON.stringify({ width: 320, height: 240, fps: 12, scenes: SCENES }));
    expect((await cli(dir, 'storyboard', 'create', 'Fox', '--file', file)).code).toBe(0);
    await made(dir, 'generate', 'Fox');
    const [bought] = await takesOf(dir);
    expect(bought).toMatchObject({ scene: 'dawn', take: 1, picked: true, yours: null });

    // The creator's own picture replaces the bought still of "dawn".
    const png = join(tempDir(), 'mine.png');
    expect(spawnSync(ffmpegPath(), ['-v', 'error', '-f', 'lavfi', '-i', 'color=c=orange:s=320x240', '-frames:v', '1', '-y', png]).status).toBe(0);
    writeFileSync(file, JSON.stringify({ width: 320, height: 240, fps: 12, scenes: [{ ...SCENES[0], image: { file: png } }, SCENES[1]] }));
    expect((await cli(dir, 'storyboard', 'edit', 'Fox', '--file', file, '--revision', await storyboardRevision(dir, 'Fox'))).code).toBe(0);
    await made(dir, 'generate', 'Fox');
    const ownClip = (await tasksOf(dir)).find((t) => t.kind === 'clip' && JSON.stringify(t.input.image_url).includes('own-'))!;
    expect((await lastRender(dir)).input.scenes![0]!.clip).toEqual({ $output: ownClip.id });

    const listed = await takesOf(dir);
    expect(listed.map((t) => [t.scene, t.take, t.picked, t.yours])).toEqual([
      ['dawn', 1, false, { kind: 'image', name: 'mine.png' }],
      ['home', 1, true, null],
    ]);
    const table = await cli(dir, 'takes', 'Fox');
    expect(table.out).toMatch(/^dawn +1 +a fox asleep/m);
    expect(table.out).toContain('dawn: your own picture (mine.png) is used, no take; "studio pick Fox dawn TAKE" puts a take back in the render');

    // A new take of its still is refused; one of its clip makes a clip from the picture and records no take.
    const refused = await cli(dir, 'generate', 'Fox', '--new-take', 'dawn', '--only', 'image');
    expect(refused.code).not.toBe(0);
    expect(refused.err).toContain('scene "dawn" uses your own still, so a new take of its image would make nothing new');
    // Both, the default, can make no still either: it prices just a new clip.
    expect((await cli(dir, 'estimate', 'Fox', '--new-take', 'dawn')).out).toMatch(/^dawn:image +yours[^\n]*\ndawn:clip +new/m);
    const images = sim.charges.filter((c) => c.kind === 'image').length;
    await made(dir, 'generate', 'Fox', '--new-take', 'dawn', '--only', 'clip');
    expect(sim.charges.filter((c) => c.kind === 'image')).toHaveLength(images);
    const newClip = (await tasksOf(dir)).filter((t) => t.kind === 'clip').sort((a, b) => b.id - a.id)[0]!;
    expect(newClip.id).toBeGreaterThan(ownClip.id);
    expect(newClip.status).toBe('SUCCEEDED');
    expect(JSON.stringify(newClip.input.image_url)).toContain('own-');
    expect((await lastRender(dir)).input.scenes![0]!.clip).toEqual({ $output: newClip.id });
    expect((await takesOf(dir)).map((t) => [t.scene, t.take, t.picked])).toEqual([
      ['dawn', 1, false],
      ['home', 1, true],
    ]);

    // Variations of it would be paid clips that are no takes, so they are refused before anything is bought.
    const before = sim.charges.length;
    for (const command of ['estimate', 'generate']) {
      const many = await cli(dir, command, 'Fox', '--new-take', 'dawn', '--only', 'clip', '--variations', '3');
      expect(many.code).not.toBe(0);
      expect(many.err).toContain('scene "dawn" uses your own still, so variations of its clip could not be compared or picked; make one new take of its clip at a time');
    }
    expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
    expect(sim.charges).toHaveLength(before);
    // Both clips made from the picture were paid for and are no takes: each stays listed, by task, with how to use it.
    expect((await cli(dir, 'takes', 'Fox')).out).toContain(
      `dawn: clips made from your own picture, paid for and kept though no takes: task ${ownClip.id} (succeeded), task ${newClip.id} (succeeded); "clip": {"task": N} in scene dawn of Fox's storyboard uses one as it is`,
    );

    // Picking the bought take puts it back: the storyboard no longer names the picture, and nothing is bought.
    const charges = sim.charges.length;
    const picked = await cli(dir, 'pick', 'Fox', 'dawn', '1');
    expect(picked).toMatchObject({ code: 0, err: '' });
    expect(picked.out).toContain('scene dawn renders take 1 (ready) in place of your own picture (mine.png), which the storyboard no longer names; nothing was bought');
    const dawn = (await board(dir)).scenes[0]!;
    expect(dawn.image).toBeUndefined();
    expect(dawn.take).toBe(1);
    expect(dawn.imageSeed).toBeUndefined();
    expect(dawn.clipSeed).toBeUndefined();
    const again = await made(dir, 'generate', 'Fox');
    expect(sim.charges).toHaveLength(charges);
    // The render of take 1 was made before the picture came: this Generate uses it again, as it is.
    const used = Number(/^render +reuse (\d+)/m.exec(again.out)?.[1]);
    const render = (await tasksOf(dir)).find((t) => t.id === used)!;
    expect(render.status).toBe('SUCCEEDED');
    expect(render.input.scenes![0]!.clip).toEqual({ $output: bought!.steps.find((s) => s.kind === 'clip')!.taskId });
    expect((await takesOf(dir)).map((t) => [t.scene, t.take, t.picked, t.yours])).toEqual([
      ['dawn', 1, true, null],
      ['home', 1, true, null],
    ]);
  });
});
