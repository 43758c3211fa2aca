import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ffmpegPath } from '../main/media/binaries.ts';
import { coverCut } from '../main/pipeline/ownShapeCuts.ts';
import { startSimulator, type RunningSimulator } from '../main/simulator/server.ts';
import { cli } from './helpers/cli.ts';
import { writeSettings } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';

let sim: RunningSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

/** A still, or with `seconds` a clip, of this size made by ffmpeg. */
function media(path: string, size: string, seconds?: number): string {
  const args = seconds
    ? ['-f', 'lavfi', '-i', `color=c=red:s=${size}:r=12:d=${seconds}`, '-c:v', 'libx264', '-pix_fmt', 'yuv420p']
    : ['-f', 'lavfi', '-i', `color=c=orange:s=${size}`, '-frames:v', '1'];
  expect(spawnSync(ffmpegPath(), ['-v', 'error', ...args, '-y', path]).status).toBe(0);
  return path;
}

async function estimate(board: object) {
  sim = await startSimulator({ jobMs: 20 });
  const dir = tempDir();
  writeSettings(dir, { providers: { simulator: { baseUrl: sim.url } } });
  const file = join(dir, 'board.json');
  writeFileSync(file, JSON.stringify(board));
  expect((await cli(dir, 'storyboard', 'create', 'Shape', '--file', file)).code).toBe(0);
  const run = await cli(dir, 'estimate', 'Shape');
  expect(run.code, run.err).toBe(0);
  expect(sim.charges).toEqual([]);
  return run.out;
}

describe('how much of your own picture or clip the frame cuts, in the estimate', () => {
  it('is the share a cover fit cuts: none for the same shape, 68 % for 16:9 in 9:16', () => {
    expect(coverCut(1920, 1080, 1280, 720)).toBe(0);
    expect(coverCut(1280, 720, 720, 1280)).toBeCloseTo(0.684, 3);
    expect(coverCut(720, 1280, 1280, 720)).toBeCloseTo(0.684, 3);
  });

  it('with fit "crop" says how much of your clip is cut; with "blur", that a model asked for the frame cuts your still', async () => {
    const clip = media(join(tempDir(), 'wide.mp4'), '320x180', 1);
    const out = await estimate({ width: 360, height: 640, fit: 'crop', scenes: [{ id: 'mine', imagePrompt: 'x', duration: 1, clip: { file: clip } }] });
    expect(out).toContain('Shape: scene "mine": fit "crop" cuts about 68 % of your clip\'s picture to fill the 360x640 frame; set the project\'s fit to "pad" or "blur" to keep all of it.');
    await sim!.close();

    const tall = media(join(tempDir(), 'tall.png'), '360x640');
    const wide = await estimate({ width: 840, height: 360, fit: 'blur', scenes: [{ id: 'tall', imagePrompt: 'x', duration: 1, image: { file: tall } }] });
    expect(wide).toContain('Shape: scene "tall": the clip model is asked for the 840x360 frame, so it cuts about 76 % of your picture before fit "blur" applies; crop the picture to the frame\'s shape to choose what stays.');
    await sim!.close();

    // A picture in the frame's shape is cut nowhere: nothing is said.
    const same = media(join(tempDir(), 'same.png'), '420x180');
    expect(await estimate({ width: 840, height: 360, fit: 'crop', scenes: [{ id: 'same', imagePrompt: 'x', duration: 1, image: { file: same } }] })).not.toContain('your picture');
  }, 60_000);
});
