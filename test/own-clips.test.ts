import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ffmpegPath } from '../main/media/binaries.ts';
import { probe } from '../main/media/probe.ts';
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

/** Real media made by ffmpeg: a red clip of `seconds`, or an orange still. */
function ownMedia(path: string, seconds?: number): string {
  const args = seconds
    ? ['-f', 'lavfi', '-i', `color=c=red:s=320x240:r=12:d=${seconds}`, '-c:v', 'libx264', '-pix_fmt', 'yuv420p']
    : ['-f', 'lavfi', '-i', 'color=c=orange:s=320x240', '-frames:v', '1'];
  const made = spawnSync(ffmpegPath(), ['-v', 'error', ...args, '-y', path]);
  expect(made.status).toBe(0);
  return path;
}

/** The colour of one frame of a video, at `at` seconds, as one averaged RGB pixel. */
function colourAt(video: string, at: number): number[] {
  const frame = spawnSync(ffmpegPath(), ['-v', 'error', '-ss', String(at), '-i', video, '-vf', 'scale=1:1', '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-']).stdout;
  return [...frame];
}

async function save(dir: string, project: string, scenes: object[], action: 'create' | 'edit' = 'create') {
  const file = join(dir, `${project}-${Date.now()}.json`);
  writeFileSync(file, JSON.stringify({ width: 320, height: 240, fps: 12, scenes }));
  const revision = action === 'edit' ? ['--revision', String(JSON.parse((await cli(dir, 'storyboard', 'show', project, '--json')).out).revision)] : [];
  return cli(dir, 'storyboard', action, project, '--file', file, ...revision);
}

const tasksOf = async (dir: string) => JSON.parse((await cli(dir, 'tasks', '--json')).out) as TaskJson[];

describe('your own clips', () => {
  it('a scene with your own clip buys no image or clip, its narration is made, and the render plays its own frames', async () => {
    const { sim, dir } = await simulatedFolderForTest();
    const charged = (kind: string) => sim.charges.filter((c) => c.kind === kind).length;
    const mp4 = ownMedia(join(tempDir(), 'mine.mp4'), 2);
    const sum = createHash('sha256').update(readFileSync(mp4)).digest('hex');
    const scenes = [
      { id: 'mine', imagePrompt: 'my shot', duration: 2, fit: 'scene', narration: 'Here is my own shot.', clip: { file: mp4 } },
      { id: 'sea', imagePrompt: 'the sea', duration: 1, fit: 'scene' },
    ];
    expect((await save(dir, 'Own', scenes)).code).toBe(0);

    const estimate = await cli(dir, 'estimate', 'Own');
    expect(estimate.code).toBe(0);
    expect(estimate.out).toMatch(/mine:clip\s+yours\s+yours\s+file\s+0\.00 USD\s+yours: mine\.mp4, 2\.0 s/);
    expect(estimate.out).not.toMatch(/mine:(image|clip)\s+new/);
    expect(estimate.out).toMatch(/mine:speech\s+new/);

    expect((await cli(dir, 'generate', 'Own')).code).toBe(0);
    expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
    const tasks = await tasksOf(dir);
    // Only the other scene's image and clip were bought; the narration of the own clip's scene was.
    expect([charged('image'), charged('clip'), charged('speech')]).toEqual([1, 1, 1]);
    expect(tasks.filter((t) => t.kind === 'clip').map((t) => t.input.prompt)).toEqual(['the sea']);
    const render = tasks.find((t) => t.kind === 'render')!;
    expect(render.status).toBe('SUCCEEDED');
    const clipRef = (render.input.scenes as { clip: Record<string, unknown> }[])[0]!.clip;
    expect(clipRef).toMatchObject({ sha256: sum, $file: expect.stringMatching(new RegExp(`^projects/\\d+/media/own-${sum}\\.mp4$`)) });
    expect(readFileSync(join(dir, clipRef.$file as string))).toEqual(readFileSync(mp4));
    const out = join(dir, render.outputPath!);
    expect((await probe(out)).durationSec).toBeCloseTo(3, 0);
    // The first two seconds are the creator's red frames.
    for (const at of [0.2, 1.0, 1.7]) expect(colourAt(out, at)).toEqual([expect.closeTo(254, -1.5), expect.closeTo(0, -1.5), expect.closeTo(0, -1.5)]);
    expect(colourAt(out, 2.5)).not.toEqual(colourAt(out, 1.0));

    // The original may go: the copy is the clip, and a render again buys nothing.
    rmSync(mp4);
    const before = sim.charges.length;
    expect((await cli(dir, 'render', 'Own')).code).toBe(0);
    expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
    expect((await tasksOf(dir)).filter((t) => t.kind === 'render').every((t) => t.status === 'SUCCEEDED')).toBe(true);
    expect(sim.charges.length).toBe(before);
  }, 80_000);

  it('a file that is no clip, a still and a huge file are refused, naming the scene; nothing is saved, enqueued or charged', async () => {
    const { sim, dir } = await simulatedFolderForTest();
    const text = join(tempDir(), 'notes.mp4');
    writeFileSync(text, 'only words\n');
    expect((await save(dir, 'Text', [{ id: 'first', imagePrompt: 'x', clip: { file: text } }])).code).toBe(0);
    const before = (await cli(dir, 'storyboard', 'show', 'Text', '--json')).out;
    for (const command of ['estimate', 'generate']) {
      const refused = await cli(dir, command, 'Text');
      expect(refused.code).not.toBe(0);
      expect(refused.err).toContain(`scene 1 ("first") clip: ${text} is not a video; give a clip (MP4, MOV, WebM) with a picture in it. Nothing was enqueued.`);
    }
    expect((await cli(dir, 'storyboard', 'show', 'Text', '--json')).out).toBe(before);

    const png = ownMedia(join(tempDir(), 'still.png'));
    expect((await save(dir, 'Still', [{ id: 'first', imagePrompt: 'x', clip: { file: png } }])).code).toBe(0);
    expect((await cli(dir, 'generate', 'Still')).err).toContain(`scene 1 ("first") clip: ${png} is a still picture, not a clip; use it as the scene's "image" instead`);

    const huge = join(tempDir(), 'huge.mp4');
    writeFileSync(huge, '');
    truncateSync(huge, 1025 * 1024 * 1024);
    expect((await save(dir, 'Huge', [{ id: 'big', imagePrompt: 'x', clip: { file: huge } }])).code).toBe(0);
    expect((await cli(dir, 'generate', 'Huge')).err).toContain(`scene 1 ("big") clip: ${huge} is 1025 MB, more than the 1024 MB a clip may be; save it smaller`);

    const both = await save(dir, 'Both', [{ id: 'two', imagePrompt: 'x', image: { file: png }, clip: { file: text } }]);
    expect(both.code).not.toBe(0);
    expect(both.err).toContain('scene 1 ("two"): has both its own image and its own clip');
    expect(await tasksOf(dir)).toEqual([]);
    expect(sim.charges).toEqual([]);
  }, 60_000);

  it('{"take": N} uses the image or clip a take made, of this scene or another; a take whose file is gone is refused', async () => {
    const { sim, dir } = await simulatedFolderForTest();
    expect((await save(dir, 'Fox', [{ id: 'fox', imagePrompt: 'a fox', duration: 1 }])).code).toBe(0);
    expect((await cli(dir, 'generate', 'Fox')).code).toBe(0);
    expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
    const first = await tasksOf(dir);
    const image = first.find((t) => t.kind === 'image')!;
    const clip = first.find((t) => t.kind === 'clip')!;
    const bought = sim.charges.length;

    const scenes = [
      { id: 'fox', imagePrompt: 'a fox', motionPrompt: 'the fox turns its head', duration: 1, image: { take: 1 } },
      { id: 'again', imagePrompt: 'the fox once more', duration: 1, clip: { scene: 'fox', take: 1 } },
    ];
    expect((await save(dir, 'Fox', scenes, 'edit')).code).toBe(0);
    const estimate = await cli(dir, 'estimate', 'Fox');
    expect(estimate.out).toMatch(new RegExp(`fox:image\\s+yours\\s+yours\\s+task ${image.id}\\s+0\\.00 USD\\s+yours: the image of take 1 \\(task ${image.id}\\)`));
    expect(estimate.out).toMatch(new RegExp(`again:clip\\s+yours\\s+yours\\s+task ${clip.id}\\s+0\\.00 USD\\s+yours: the clip of take 1 of scene "fox" \\(task ${clip.id}\\)`));
    expect((await cli(dir, 'generate', 'Fox')).code).toBe(0);
    expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
    const tasks = await tasksOf(dir);
    const turned = tasks.find((t) => t.kind === 'clip' && t.input.prompt === 'the fox turns its head')!;
    expect(turned.input.image_url).toEqual({ $output: image.id });
    // Only the new clip of the fox was bought: no image, and nothing for the scene that uses take 1's clip.
    expect(sim.charges.slice(bought).map((c) => c.kind)).toEqual(['clip']);
    const render = tasks.filter((t) => t.kind === 'render').at(-1)!;
    expect(render.status).toBe('SUCCEEDED');
    expect((render.input.scenes as { clip: unknown }[])[1]!.clip).toEqual({ $output: clip.id });

    rmSync(join(dir, clip.outputPath!));
    const count = tasks.length;
    const refused = await cli(dir, 'generate', 'Fox');
    expect(refused.code).not.toBe(0);
    expect(refused.err).toContain(
      `scene 2 ("again") clip (take 1 of scene "fox"): the clip of task ${clip.id} is gone from this machine (its file is not in the media folder); bring the file back, or use another take or your own file. Nothing was enqueued.`,
    );
    const missing = await save(dir, 'Fox', [{ id: 'fox', imagePrompt: 'a fox', clip: { take: 9 } }], 'edit');
    expect(missing.code).toBe(0);
    expect((await cli(dir, 'generate', 'Fox')).err).toContain('scene 1 ("fox") clip: there is no take 9 of scene "fox" (the takes of scene "fox" are 1, 2)');
    expect(await tasksOf(dir)).toHaveLength(count);
    expect(sim.charges.length).toBe(bought + 1);
  }, 80_000);
});
