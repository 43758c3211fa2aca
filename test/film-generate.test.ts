import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ffmpegPath, ffprobePath } from '../main/media/binaries.ts';
import { subtitlesBeside } from '../main/media/filmFiles.ts';
import { cli } from './helpers/cli.ts';
import { hostForTest, simulatedFolderForTest } from './helpers/running.ts';
import { chordFile } from './helpers/film.ts';
import { tempDir } from './helpers/tmp.ts';

/** White pixels in the lower third of the frame at `at` seconds. */
function whiteBelow(file: string, at: number): number {
  const raw = execFileSync(ffmpegPath(), ['-v', 'error', '-ss', String(at), '-i', file, '-frames:v', '1', '-vf', 'crop=iw:ih/3:0:ih*2/3', '-f', 'rawvideo', '-pix_fmt', 'gray', '-'], { maxBuffer: 64 << 20 });
  return raw.filter((v) => v > 220).length;
}

const tasksOf = async (dir: string) => JSON.parse((await cli(dir, 'tasks', '--json')).out) as { id: number; kind: string; status: string; outputPath: string | null; error: string | null }[];

describe('a finished film from Generate', () => {
  it('crossfades, subtitles beside and in the film, music under the voice at -14 LUFS; changing the finish buys nothing', async () => {
    const { sim, dir } = await simulatedFolderForTest();
    const music = chordFile(join(tempDir(), 'bed.m4a'), 2);
    const board = {
      width: 320,
      height: 240,
      fps: 12,
      transition: { type: 'crossfade', duration: 0.5 },
      music: { file: music },
      scenes: [
        { id: 'dawn', imagePrompt: 'a fox asleep in the snow', narration: 'At dawn, the fox wakes.', duration: 2 },
        { id: 'hunt', imagePrompt: 'the fox listening', narration: 'It listens for what it cannot see.', duration: 2, transition: { type: 'fade-black', duration: 1 } },
        { id: 'home', imagePrompt: 'the fox trotting home', duration: 2 },
      ],
    };
    const file = join(dir, 'board.json');
    writeFileSync(file, JSON.stringify(board));
    expect((await cli(dir, 'storyboard', 'create', 'Fox', '--file', file)).code).toBe(0);

    const estimate = await cli(dir, 'estimate', 'Fox');
    expect(estimate.code, estimate.err).toBe(0);
    expect(estimate.out).toMatch(/The film: about \d+\.\d s \(\d+\.\d s of scenes, 0\.5 s of them shown through crossfades\); 1 crossfade and 1 fade through black between scenes; subtitles beside it and as a track to turn on; music under the voice \(yours: bed\.m4a, 2\.0 s, looped or cut to the film, 12 LU under it, lower while someone speaks\); the sound at -14 LUFS\./);

    expect((await cli(dir, 'generate', 'Fox')).code).toBe(0);
    expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
    const render = (await tasksOf(dir)).find((t) => t.kind === 'render')!;
    expect(render.status, render.error ?? '').toBe('SUCCEEDED');
    const film = join(dir, render.outputPath!);
    const { srt, vtt } = subtitlesBeside(film);
    expect(readFileSync(srt, 'utf8')).toContain('It listens for what it cannot see.');
    expect(readFileSync(vtt, 'utf8')).toMatch(/^WEBVTT\n\n00:00:00\.000 --> /);
    const streams = execFileSync(ffprobePath(), ['-v', 'error', '-show_entries', 'stream=codec_type', '-of', 'csv=p=0', film], { encoding: 'utf8' });
    expect(streams.split('\n').filter(Boolean).slice(0, 3)).toEqual(['video', 'audio', 'subtitle']);
    const measured = spawnSync(ffmpegPath(), ['-hide_banner', '-nostats', '-i', film, '-map', '0:a', '-af', 'ebur128=peak=true', '-f', 'null', '-']).stderr.toString().split('Summary:').at(-1)!;
    expect(Math.abs(Number(/I:\s+(-?[\d.]+) LUFS/.exec(measured)![1]) + 14)).toBeLessThanOrEqual(0.5);
    expect(Number(/Peak:\s+(-?[\d.]+) dBFS/.exec(measured)![1])).toBeLessThanOrEqual(-1);
    const charged = sim.charges.length;

    // The loopback host serves the film's subtitles after its address, for the player's <track>.
    const host = await hostForTest(dir, { port: 0 });
    const answer = await fetch(`${host.url}/media/${render.id}/subtitles.vtt?token=${host.token}`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toContain('text/vtt');
    expect(await answer.text()).toContain('At dawn, the fox wakes.');

    // Burning the subtitles in and a plainer cut: the film is made again, and nothing is bought.
    const saved = JSON.parse((await cli(dir, 'storyboard', 'show', 'Fox', '--json')).out) as { revision: number; music: { sha256: string } };
    // Generate filled in the music's checksum: the project keeps its own copy of the file.
    expect(saved.music.sha256).toMatch(/^[0-9a-f]{64}$/);
    writeFileSync(file, JSON.stringify({ ...saved, subtitles: { burn: true }, transition: { type: 'cut' } }));
    const edited = await cli(dir, 'storyboard', 'edit', 'Fox', '--file', file);
    expect(edited.code, edited.err).toBe(0);
    expect((await cli(dir, 'generate', 'Fox')).code).toBe(0);
    expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
    const renders = (await tasksOf(dir)).filter((t) => t.kind === 'render');
    expect(renders.map((t) => t.status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    expect(sim.charges).toHaveLength(charged);
    // The same frame with the first cue burned in: more white in its lower part than before.
    expect(whiteBelow(join(dir, renders[1]!.outputPath!), 0.5)).toBeGreaterThan(whiteBelow(film, 0.5) + 30);
  }, 120_000);

  it('a scene shown as its still buys no clip and renders; another trim of a bought clip buys nothing', async () => {
    const { sim, dir } = await simulatedFolderForTest();
    const board = {
      width: 320,
      height: 240,
      fps: 12,
      scenes: [
        { id: 'dawn', imagePrompt: 'a fox asleep in the snow', duration: 2, trim: { in: 0.5 } },
        { id: 'pines', imagePrompt: 'pines in the snow', narration: 'The pines stand still.', duration: 2, motion: 'push-in' },
      ],
    };
    const file = join(dir, 'board.json');
    writeFileSync(file, JSON.stringify(board));
    expect((await cli(dir, 'storyboard', 'create', 'Still', '--file', file)).code).toBe(0);
    const estimate = await cli(dir, 'estimate', 'Still');
    expect(estimate.out).not.toContain('pines:clip');
    expect(estimate.out).toContain('1 scene shown as its still with a move, no clip bought');
    expect((await cli(dir, 'generate', 'Still')).code).toBe(0);
    expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
    expect(sim.charges.map((c) => c.kind).sort()).toEqual(['clip', 'image', 'image', 'speech']);
    const render = (await tasksOf(dir)).find((t) => t.kind === 'render')!;
    expect(render.status, render.error ?? '').toBe('SUCCEEDED');

    // Another trim of the same clip: the film is made again from the clip bought, nothing is bought.
    const saved = JSON.parse((await cli(dir, 'storyboard', 'show', 'Still', '--json')).out) as typeof board & { revision: number };
    writeFileSync(file, JSON.stringify({ ...saved, scenes: [{ ...saved.scenes[0]!, trim: { in: 1 } }, saved.scenes[1]] }));
    expect((await cli(dir, 'storyboard', 'edit', 'Still', '--file', file)).code).toBe(0);
    expect((await cli(dir, 'generate', 'Still')).code).toBe(0);
    expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
    expect(sim.charges).toHaveLength(4);
    expect((await tasksOf(dir)).filter((t) => t.kind === 'render').map((t) => t.status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
  }, 60_000);

  it('refuses music that is gone or has no sound, in words that name the file, and buys nothing', async () => {
    const { sim, dir } = await simulatedFolderForTest();
    const gone = join(tempDir(), 'gone.mp3');
    const silent = join(tempDir(), 'picture.png');
    execFileSync(ffmpegPath(), ['-v', 'error', '-f', 'lavfi', '-i', 'color=c=red:s=64x64', '-frames:v', '1', '-y', silent]);
    const file = join(dir, 'board.json');
    for (const [music, words] of [[gone, `music: there is no file at ${gone}; put the music there or change the path`], [silent, `music: ${silent} has no sound; give a music file (MP3, M4A, AAC, WAV, FLAC, OGG or Opus)`]] as const) {
      rmSync(join(dir, 'board.json'), { force: true });
      writeFileSync(file, JSON.stringify({ width: 320, height: 240, music: { file: music }, scenes: [{ id: 'dawn', imagePrompt: 'a fox', narration: 'Hello.' }] }));
      const name = `Fox${words.length}`;
      expect((await cli(dir, 'storyboard', 'create', name, '--file', file)).code).toBe(0);
      const generate = await cli(dir, 'generate', name);
      expect(generate.code).toBe(2);
      expect(generate.err).toContain(words);
    }
    expect(sim.charges).toEqual([]);
    expect(existsSync(join(dir, 'projects', '1', 'renders'))).toBe(false);
  }, 60_000);
});
