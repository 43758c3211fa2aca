import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ffmpegPath } from '../main/media/binaries.ts';
import { probe } from '../main/media/probe.ts';
import { cli } from './helpers/cli.ts';
import { simulatedFolderForTest } from './helpers/running.ts';
import { tempDir } from './helpers/tmp.ts';

/** A creator's clip made by ffmpeg: `seconds` of a red picture with a 440 Hz tone. */
function toneClip(path: string, seconds: number): string {
  const made = spawnSync(ffmpegPath(), [
    '-v', 'error',
    '-f', 'lavfi', '-i', `color=c=red:s=320x240:r=12:d=${seconds}`,
    '-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=48000:duration=${seconds}`,
    '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', '-y', path,
  ]);
  expect(made.status, made.stderr.toString()).toBe(0);
  return path;
}

/** The mean loudness in dB of the render's sound from `from` for `seconds` (about -91 dB for silence). */
function meanVolume(video: string, from: number, seconds: number): number {
  const run = spawnSync(ffmpegPath(), ['-v', 'info', '-ss', String(from), '-t', String(seconds), '-i', video, '-vn', '-af', 'volumedetect', '-f', 'null', '-']);
  return Number(/mean_volume: (-?[\d.]+) dB/.exec(run.stderr.toString())![1]);
}

describe('your own clip in the render', () => {
  it('keeps its sound (lower under a narration) and its whole length, and with fit "scene" the estimate says what is cut', async () => {
    const { sim, dir } = await simulatedFolderForTest();
    const spoken = toneClip(join(tempDir(), 'spoken.mp4'), 3);
    const cut = toneClip(join(tempDir(), 'cut.mp4'), 3);
    const scenes = [
      // Written 2 s, the clip 3 s: the scene lasts the clip's 3 s (the narration is far shorter).
      { id: 'talk', imagePrompt: 'my shot', duration: 2, narration: 'Hi.', clip: { file: spoken } },
      // Fit "scene": 2 s as written, the clip's last second cut, and the estimate says so.
      { id: 'cut', imagePrompt: 'my other shot', duration: 2, fit: 'scene', clip: { file: cut } },
    ];
    const file = join(dir, 'board.json');
    writeFileSync(file, JSON.stringify({ width: 320, height: 240, fps: 12, scenes }));
    expect((await cli(dir, 'storyboard', 'create', 'Own', '--file', file)).code).toBe(0);

    const estimate = await cli(dir, 'estimate', 'Own');
    expect(estimate.code).toBe(0);
    expect(estimate.out).toContain('yours: spoken.mp4, 3.0 s; the scene lasts all 3.0 s of it, not the 2 s written; its sound kept, 12 dB lower under the narration');
    expect(estimate.out).toContain('yours: cut.mp4, 3.0 s; its last 1.0 s cut to the scene\'s 2 s (fit "scene"; remove it to keep all of the clip); its sound kept');

    expect((await cli(dir, 'generate', 'Own')).code).toBe(0);
    expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
    // Only the narration was bought.
    expect(sim.charges.map((c) => c.kind)).toEqual(['speech']);
    const tasks = JSON.parse((await cli(dir, 'tasks', '--json')).out) as { kind: string; status: string; outputPath: string | null }[];
    const render = tasks.find((t) => t.kind === 'render')!;
    expect(render.status).toBe('SUCCEEDED');
    const out = join(dir, render.outputPath!);
    expect((await probe(out)).durationSec).toBeCloseTo(5, 1);

    // After the narration the first clip's tone is heard, 12 dB down; the second scene's is heard whole.
    const under = meanVolume(out, 1.8, 1);
    const whole = meanVolume(out, 3.3, 1.4);
    expect(under).toBeGreaterThan(-40);
    expect(whole).toBeGreaterThan(-30);
    expect(whole - under).toBeCloseTo(12, -0.5);
  }, 60_000);
});
