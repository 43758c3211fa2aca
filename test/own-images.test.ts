import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ffmpegPath } from '../main/media/binaries.ts';
import { probe } from '../main/media/probe.ts';
import { chargesOf } from './helpers/charges.ts';
import { cli } from './helpers/cli.ts';
import { simulatedFolderForTest } from './helpers/running.ts';
import { tempDir } from './helpers/tmp.ts';

interface TaskJson {
  id: number;
  kind: string;
  status: string;
  input: Record<string, unknown>;
  outputPath: string | null;
}

/** A real PNG made by ffmpeg: the creator's own still. */
function ownPng(path: string): string {
  const made = spawnSync(ffmpegPath(), ['-v', 'error', '-f', 'lavfi', '-i', 'color=c=orange:s=320x240', '-frames:v', '1', '-y', path]);
  expect(made.status).toBe(0);
  return path;
}

async function board(dir: string, project: string, scenes: object[]) {
  const file = join(dir, `${project}.json`);
  writeFileSync(file, JSON.stringify({ width: 320, height: 240, fps: 12, scenes }));
  return cli(dir, 'storyboard', 'create', project, '--file', file);
}

const tasksOf = async (dir: string) => JSON.parse((await cli(dir, 'tasks', '--json')).out) as TaskJson[];

describe('your own pictures', () => {
  it('a scene with your own PNG buys no image, its clip is made from the copy, and moving the original breaks nothing', async () => {
    const { sim, dir } = await simulatedFolderForTest();
    const png = ownPng(join(tempDir(), 'mine.png'));
    const sum = createHash('sha256').update(readFileSync(png)).digest('hex');
    expect((await board(dir, 'Own', [{ id: 'mine', imagePrompt: 'my still', image: { file: png } }, { id: 'sea', imagePrompt: 'the sea', duration: 1 }])).code).toBe(0);

    const estimate = await cli(dir, 'estimate', 'Own');
    expect(estimate.code).toBe(0);
    expect(estimate.out).toMatch(/mine:image\s+yours\s+yours\s+file\s+0\.00 USD\s+yours: mine\.png/);
    expect(estimate.out).not.toMatch(/mine:image\s+new/);

    expect((await cli(dir, 'generate', 'Own')).code).toBe(0);
    expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
    const tasks = await tasksOf(dir);
    expect(tasks.filter((t) => t.kind === 'image')).toHaveLength(1);
    const clips = tasks.filter((t) => t.kind === 'clip');
    const mineClip = clips.find((t) => (t.input.prompt as string) === 'my still')!;
    expect(mineClip.status).toBe('SUCCEEDED');
    expect(mineClip.input.image_url).toMatchObject({ sha256: sum, $file: expect.stringMatching(new RegExp(`^projects/\\d+/media/own-${sum}\\.png$`)) });
    expect(readFileSync(join(dir, (mineClip.input.image_url as { $file: string }).$file))).toEqual(readFileSync(png));
    // The simulator makes a clip from the image it is sent: this one is the orange still.
    const frame = spawnSync(ffmpegPath(), ['-v', 'error', '-i', join(dir, mineClip.outputPath!), '-vf', 'scale=1:1', '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-']).stdout;
    expect([...frame]).toEqual([expect.closeTo(255, -1.5), expect.closeTo(165, -1.5), expect.closeTo(0, -1.5)]);
    // The simulator charged a clip for the scene and no image but the other scene's.
    expect(chargesOf(sim, mineClip.id).map((c) => c.kind)).toEqual(['clip']);
    expect(sim.charges.filter((c) => c.kind === 'image')).toHaveLength(1);
    const render = tasks.find((t) => t.kind === 'render')!;
    expect(render.status).toBe('SUCCEEDED');
    expect((await probe(join(dir, render.outputPath!))).video).toMatchObject({ width: 320, height: 240 });
    // The storyboard keeps the copy's checksum, so the original may go.
    const saved = JSON.parse((await cli(dir, 'storyboard', 'show', 'Own', '--json')).out);
    expect(JSON.stringify(saved)).toContain(sum);

    renameSync(png, `${png}.moved`);
    const charged = sim.charges.length;
    const again = await cli(dir, 'render', 'Own');
    expect(again.err).toBe('');
    expect(again.code).toBe(0);
    expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
    const renders = (await tasksOf(dir)).filter((t) => t.kind === 'render');
    expect(renders).toHaveLength(2);
    expect(renders.every((t) => t.status === 'SUCCEEDED')).toBe(true);
    expect(sim.charges.length).toBe(charged);
    expect(existsSync(png)).toBe(false);
  }, 80_000);

  it('a text file named .png is refused, naming the scene and what to fix, and nothing is saved or enqueued', async () => {
    const { sim, dir } = await simulatedFolderForTest();
    const fake = join(tempDir(), 'not-a-picture.png');
    writeFileSync(fake, 'this is only text\n');
    expect((await board(dir, 'Fake', [{ id: 'first', imagePrompt: 'a still', image: { file: fake } }])).code).toBe(0);
    const before = (await cli(dir, 'storyboard', 'show', 'Fake', '--json')).out;
    for (const command of ['estimate', 'generate']) {
      const refused = await cli(dir, command, 'Fake');
      expect(refused.code).not.toBe(0);
      expect(refused.err).toContain(`scene 1 ("first") image: ${fake} is not a PNG, JPEG or WebP picture; give a still in one of those formats`);
    }
    const missing = await board(dir, 'Gone', [{ id: 'first', imagePrompt: 'a still', image: { file: join(tempDir(), 'nowhere.png') } }]);
    expect(missing.code).toBe(0);
    expect((await cli(dir, 'generate', 'Gone')).err).toMatch(/scene 1 \("first"\) image: there is no file at .*nowhere\.png; put the picture there or change the path/);
    const huge = join(tempDir(), 'huge.png');
    writeFileSync(huge, '');
    truncateSync(huge, 51 * 1024 * 1024);
    expect((await board(dir, 'Huge', [{ id: 'big', imagePrompt: 'a still', image: { file: huge } }])).code).toBe(0);
    expect((await cli(dir, 'generate', 'Huge')).err).toContain(`scene 1 ("big") image: ${huge} is 51 MB, more than the 50 MB a still may be; save it smaller`);
    expect((await cli(dir, 'storyboard', 'show', 'Fake', '--json')).out).toBe(before);
    expect(await tasksOf(dir)).toEqual([]);
    expect(sim.charges).toEqual([]);
    const relative = await board(dir, 'Rel', [{ id: 'first', imagePrompt: 'a still', image: { file: 'still.png' } }]);
    expect(relative.code).not.toBe(0);
    expect(relative.err).toContain('scene 1 ("first") image.file: "still.png" is not a full path');
  }, 60_000);

  it('{"task": N} makes the clip from a library image: no image is bought again', async () => {
    const { sim, dir } = await simulatedFolderForTest();
    expect((await board(dir, 'First', [{ id: 'fox', imagePrompt: 'a fox', duration: 1 }])).code).toBe(0);
    expect((await cli(dir, 'generate', 'First')).code).toBe(0);
    expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
    const image = (await tasksOf(dir)).find((t) => t.kind === 'image')!;
    expect(image.status).toBe('SUCCEEDED');

    expect((await board(dir, 'Second', [{ id: 'again', imagePrompt: 'the fox, moving', image: { task: image.id }, duration: 1 }])).code).toBe(0);
    const estimate = await cli(dir, 'estimate', 'Second');
    expect(estimate.out).toMatch(new RegExp(`again:image\\s+yours\\s+yours\\s+task ${image.id}\\s+0\\.00 USD\\s+yours: the image of task ${image.id}`));
    const images = sim.charges.filter((c) => c.kind === 'image').length;
    expect((await cli(dir, 'generate', 'Second')).code).toBe(0);
    expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
    const tasks = await tasksOf(dir);
    const clip = tasks.find((t) => t.kind === 'clip' && t.input.prompt === 'the fox, moving')!;
    expect(clip.status).toBe('SUCCEEDED');
    expect(clip.input.image_url).toEqual({ $output: image.id });
    expect(sim.charges.filter((c) => c.kind === 'image')).toHaveLength(images);
    expect(tasks.filter((t) => t.kind === 'render').every((t) => t.status === 'SUCCEEDED')).toBe(true);

    expect((await board(dir, 'Third', [{ id: 'bad', imagePrompt: 'x', image: { task: clip.id } }])).code).toBe(0);
    expect((await cli(dir, 'generate', 'Third')).err).toContain(`scene 1 ("bad") image: task ${clip.id} made a clip, not an image; name a finished image task`);
  }, 60_000);
});
