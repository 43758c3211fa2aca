import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ffprobePath } from '../main/media/binaries.ts';
import { subtitlesBeside } from '../main/media/filmFiles.ts';
import { cli } from './helpers/cli.ts';
import { simulatedFolderForTest } from './helpers/running.ts';

interface Streams {
  streams: { codec_type: string; codec_name: string; width?: number; height?: number }[];
  format: { duration: string };
}

const probed = (file: string) => JSON.parse(execFileSync(ffprobePath(), ['-v', 'error', '-show_streams', '-show_format', '-of', 'json', file], { encoding: 'utf8' })) as Streams;

describe('export presets', () => {
  it('each preset makes its own file, named after the project and preset, in its codec, size and length; nothing is bought', async () => {
    const { sim, dir } = await simulatedFolderForTest();
    const file = join(dir, 'board.json');
    writeFileSync(file, JSON.stringify({
      aspect: '16:9',
      resolution: 180,
      fps: 12,
      transition: { type: 'crossfade', duration: 0.5 },
      scenes: [
        { id: 'dawn', imagePrompt: 'a fox asleep in the snow', narration: 'At dawn, the fox wakes.', duration: 4 },
        { id: 'home', imagePrompt: 'the fox trotting home', duration: 4 },
      ],
    }));
    expect((await cli(dir, 'storyboard', 'create', 'Fox: the film', '--file', file)).code).toBe(0);
    expect((await cli(dir, 'generate', 'Fox: the film')).code).toBe(0);
    expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
    const bought = sim.charges.length;
    const tasks = async () => JSON.parse((await cli(dir, 'tasks', '--json')).out) as { id: number; kind: string; status: string; outputPath: string | null; error: string | null }[];
    const film = (await tasks()).find((t) => t.kind === 'render')!;
    const seconds = Number(probed(join(dir, film.outputPath!)).format.duration);
    expect(seconds).toBeCloseTo(7.5, 1);

    const exported = async (preset: string) => {
      const asked = await cli(dir, 'render', 'Fox: the film', '--preset', preset);
      expect(asked.code, asked.err).toBe(0);
      expect(asked.out).toMatch(new RegExp(`render \\(${preset}\\) enqueued as task \\d+`));
      expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
      const task = (await tasks()).at(-1)!;
      expect(task.status, task.error ?? '').toBe('SUCCEEDED');
      return join(dir, task.outputPath!);
    };
    const expected: [string, string, string, number, number, string | null][] = [
      ['1080p', 'mp4', 'h264', 1920, 1080, 'aac'],
      ['4k', 'mp4', 'h264', 3840, 2160, 'aac'],
      ['vertical', 'mp4', 'h264', 1080, 1920, 'aac'],
      ['square', 'mp4', 'h264', 1080, 1080, 'aac'],
      ['webm', 'webm', 'vp9', 320, 180, 'opus'],
      ['gif-preview', 'gif', 'gif', 480, 270, null],
    ];
    for (const [preset, ext, codec, width, height, sound] of expected) {
      const out = await exported(preset);
      // The project's name, its colon replaced: a file name on every system.
      expect(basename(out)).toBe(`Fox the film - ${preset}.${ext}`);
      const p = probed(out);
      const video = p.streams.find((s) => s.codec_type === 'video')!;
      expect([preset, video.codec_name, video.width, video.height]).toEqual([preset, codec, width, height]);
      expect(p.streams.find((s) => s.codec_type === 'audio')?.codec_name ?? null).toBe(sound);
      // The whole film, or a preview's first 6 s.
      expect(Number(p.format.duration)).toBeCloseTo(preset === 'gif-preview' ? 6 : seconds, 1);
      if (ext !== 'gif') expect(p.streams.some((s) => s.codec_type === 'subtitle')).toBe(true);
      expect(existsSync(subtitlesBeside(out).vtt)).toBe(true);
    }
    expect(sim.charges).toHaveLength(bought);

    const wrong = await cli(dir, 'render', 'Fox: the film', '--preset', '8k');
    expect(wrong.code).toBe(2);
    expect(wrong.err).toContain('--preset must be one of 1080p, 4k, vertical, square, webm, gif-preview, not "8k"');
  }, 180_000);
});
