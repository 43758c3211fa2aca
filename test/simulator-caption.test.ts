import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ffmpegPath } from '../main/media/binaries.ts';
import { captionLayout, wrap } from '../main/simulator/caption.ts';
import { makeMedia } from '../main/simulator/media.ts';
import { tempDir } from './helpers/tmp.ts';

const run = promisify(execFile);
const SHOTS = 'test-results/screenshots';
const PROMPT = 'a red fox wakes at dawn in deep snow, stretches, and trots toward the dark pine forest edge';

/** White text pixels in each column of a frame given as raw RGB. */
function whiteColumns(rgb: Buffer, width: number, height: number): number[] {
  const counts = new Array<number>(width).fill(0);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      if (rgb[i]! > 235 && rgb[i + 1]! > 235 && rgb[i + 2]! > 235) counts[x]!++;
    }
  }
  return counts;
}

describe('the simulator\'s caption', () => {
  it('wraps words into lines, cutting only a word longer than a line', () => {
    expect(wrap('a red fox wakes at dawn', 9)).toEqual(['a red fox', 'wakes at', 'dawn']);
    expect(wrap('snowsnowsnow fox', 5)).toEqual(['snows', 'nowsn', 'ow', 'fox']);
  });

  it('fits the frame, portrait or landscape, at the font size a landscape frame always had where it can', () => {
    for (const [w, h] of [[1080, 1920], [640, 360], [1920, 1080], [360, 640], [64, 3840]] as const) {
      const { lines, fontSize } = captionLayout(PROMPT, w, h);
      // Only a frame too narrow for a word has it cut.
      if (w >= 360) expect(lines.join(' ')).toBe(PROMPT.slice(0, 80).trim());
      for (const line of lines) expect(line.length * fontSize * 0.62).toBeLessThanOrEqual(w * 0.7 + fontSize);
    }
    expect(captionLayout('a fox', 640, 360)).toEqual({ lines: ['a fox'], fontSize: 28 });
  });

  it('stays inside a 1080x1920 clip\'s frame, all of it', async () => {
    const dir = tempDir();
    const clip = join(dir, 'clip.mp4');
    writeFileSync(clip, (await makeMedia('clip', { prompt: PROMPT, width: 1080, height: 1920, duration: 1 })).bytes);
    mkdirSync(SHOTS, { recursive: true });
    await run(ffmpegPath(), ['-v', 'error', '-ss', '0.5', '-i', clip, '-frames:v', '1', `${SHOTS}/simulator-portrait-frame.png`, '-y']);
    const { stdout } = await run(ffmpegPath(), ['-v', 'error', '-ss', '0.5', '-i', clip, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'], { encoding: 'buffer', maxBuffer: 64 << 20 });
    const columns = whiteColumns(stdout, 1080, 1920);
    // The caption is there, and no column within 5% of either edge has any of it.
    expect(columns.reduce((a, b) => a + b, 0)).toBeGreaterThan(2000);
    expect(columns.slice(0, 54).every((c) => c === 0)).toBe(true);
    expect(columns.slice(1080 - 54).every((c) => c === 0)).toBe(true);
  }, 60_000);
});
