import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ffmpegPath, ffprobePath } from '../main/media/binaries.ts';
import { probe } from '../main/media/probe.ts';
import { makeMedia } from '../main/simulator/media.ts';
import { FONT } from '../main/media/fonts.ts';
import { CUT, type Transition } from '../main/domain/finishing.ts';
import { LINE_MAX, toSrt } from '../main/domain/subtitles.ts';
import { renderScenes, type TestScene } from './helpers/film.ts';
import { tempDir } from './helpers/tmp.ts';

const FRAME = { width: 320, height: 180, fit: 'crop' as const, fps: 24 };

/** A clip of one colour, made by ffmpeg. */
function colourClip(dir: string, colour: string, seconds: number): string {
  const path = join(dir, `${colour}-${seconds}.mp4`);
  const made = spawnSync(ffmpegPath(), ['-v', 'error', '-f', 'lavfi', '-i', `color=c=${colour}:s=320x180:r=24:d=${seconds}`, '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-y', path]);
  expect(made.status, made.stderr.toString()).toBe(0);
  return path;
}

/** A narration spoken by the simulator's voice, and its length as ffprobe reads it. */
async function spoken(dir: string, name: string, text: string): Promise<{ narration: string; spoken: number; text: string }> {
  const narration = join(dir, `${name}.wav`);
  writeFileSync(narration, (await makeMedia('speech', { text })).bytes);
  return { narration, spoken: (await probe(narration)).durationSec!, text };
}

/** Frames in the film's picture, counted by decoding every one. */
function frameCount(file: string): number {
  const out = execFileSync(ffprobePath(), ['-v', 'error', '-count_frames', '-select_streams', 'v:0', '-show_entries', 'stream=nb_read_frames', '-of', 'csv=p=0', file], { encoding: 'utf8' });
  return Number(out.trim());
}

/** The mean red, green and blue (0 to 255) of the film's frame number `n`. */
function meanColour(file: string, n: number): [number, number, number] {
  const raw = execFileSync(ffmpegPath(), ['-v', 'error', '-i', file, '-vf', `select=eq(n\\,${n})`, '-vsync', '0', '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'], { maxBuffer: 64 << 20 });
  const sums = [0, 0, 0];
  for (let i = 0; i < raw.length; i++) sums[i % 3]! += raw[i]!;
  const pixels = raw.length / 3;
  return sums.map((s) => Math.round(s / pixels)) as [number, number, number];
}

/** ebur128's integrated loudness (LUFS) and true peak (dBTP) of the film's sound. */
function loudness(file: string): { integrated: number; truePeak: number } {
  const run = spawnSync(ffmpegPath(), ['-hide_banner', '-nostats', '-i', file, '-map', '0:a', '-af', 'ebur128=peak=true', '-f', 'null', '-']);
  const summary = run.stderr.toString().split('Summary:').at(-1)!;
  return { integrated: Number(/I:\s+(-?[\d.]+) LUFS/.exec(summary)![1]), truePeak: Number(/Peak:\s+(-?[\d.]+) dBFS/.exec(summary)![1]) };
}

/** RMS level (dB) of the film's sound above 13 kHz, from `from` to `to` seconds: where the test's music is and no voice reaches. */
function highBandLevel(file: string, from: number, to: number): number {
  const run = spawnSync(ffmpegPath(), ['-hide_banner', '-nostats', '-i', file, '-af', `atrim=${from}:${to},highpass=f=13000,highpass=f=13000,astats=metadata=0`, '-f', 'null', '-']);
  return Number([...run.stderr.toString().matchAll(/RMS level dB: (-?[\d.]+|-inf)/g)].at(-1)![1]);
}

const crossfade = (duration: number): Transition => ({ type: 'crossfade', duration });

describe('transitions', () => {
  it('a crossfade shows both scenes at once and shortens the film by its length; a fade through black darkens between them', async () => {
    const dir = tempDir();
    const [red, blue] = [colourClip(dir, 'red', 2), colourClip(dir, 'blue', 2)];
    const scenes = (t: Transition): TestScene[] => [{ clip: red, seconds: 2, transition: t }, { clip: blue, seconds: 2 }];

    const cut = await renderScenes(dir, scenes(CUT), FRAME, {}, join(dir, 'cut.mp4'));
    expect(frameCount(cut.output)).toBe(96);

    // 0.5 s at 24 fps: 12 frames overlap, so 96 - 12. The film's frame 42 is half way through them.
    const faded = await renderScenes(dir, scenes(crossfade(0.5)), FRAME, {}, join(dir, 'crossfade.mp4'));
    expect(faded.timeline.frames).toBe(84);
    expect(frameCount(faded.output)).toBe(84);
    expect((await probe(faded.output)).durationSec).toBeCloseTo(3.5, 1);
    const [r, , b] = meanColour(faded.output, 42);
    expect(r).toBeGreaterThan(70);
    expect(b).toBeGreaterThan(70);
    expect(meanColour(faded.output, 30)[2]).toBeLessThan(20);
    expect(meanColour(faded.output, 60)[0]).toBeLessThan(20);

    // 1 s through black: red fades out over 12 frames, blue fades in over 12; nothing overlaps.
    const black = await renderScenes(dir, scenes({ type: 'fade-black', duration: 1 }), FRAME, {}, join(dir, 'black.mp4'));
    expect(frameCount(black.output)).toBe(96);
    expect(Math.max(...meanColour(black.output, 47))).toBeLessThan(30);
    expect(Math.max(...meanColour(black.output, 48))).toBeLessThan(30);
    expect(meanColour(black.output, 30)[0]).toBeGreaterThan(200);
    expect(meanColour(black.output, 70)[2]).toBeGreaterThan(200);
  }, 60_000);

  it('a transition longer than half a scene is shortened to it, so each scene keeps frames of its own', async () => {
    const dir = tempDir();
    const [red, blue] = [colourClip(dir, 'red', 1), colourClip(dir, 'blue', 1)];
    const film = await renderScenes(dir, [{ clip: red, seconds: 1, transition: crossfade(2) }, { clip: blue, seconds: 1 }], FRAME);
    expect(film.timeline.spans[0]!.tail).toBe(12);
    expect(frameCount(film.output)).toBe(36);
  }, 60_000);
});

describe('trims and moves', () => {
  it('a trim shows the part of the clip it names; a still moves over the scene as asked', async () => {
    const dir = tempDir();
    // Two seconds of red, then two of blue.
    const clip = join(dir, 'red-blue.mp4');
    execFileSync(ffmpegPath(), ['-v', 'error', '-f', 'lavfi', '-i', 'color=c=red:s=320x180:r=24:d=2', '-f', 'lavfi', '-i', 'color=c=blue:s=320x180:r=24:d=2', '-filter_complex', '[0][1]concat=n=2:v=1:a=0', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-y', clip]);
    const trimmed = await renderScenes(dir, [{ clip, seconds: 1.5, trim: { in: 2.25 } }], FRAME, {}, join(dir, 'trimmed.mp4'));
    expect(frameCount(trimmed.output)).toBe(36);
    expect(meanColour(trimmed.output, 0)[2]).toBeGreaterThan(200);
    expect(meanColour(trimmed.output, 0)[0]).toBeLessThan(40);

    // A still: red on the left half, blue on the right. Panning left starts on its right and ends on its left.
    const still = join(dir, 'halves.png');
    execFileSync(ffmpegPath(), ['-v', 'error', '-f', 'lavfi', '-i', 'color=c=red:s=160x180', '-f', 'lavfi', '-i', 'color=c=blue:s=160x180', '-filter_complex', '[0][1]hstack', '-frames:v', '1', '-y', still]);
    const pan = await renderScenes(dir, [{ clip: still, seconds: 2, still: 'pan-left' }], FRAME, {}, join(dir, 'pan.mp4'));
    expect(frameCount(pan.output)).toBe(48);
    const [first, last] = [meanColour(pan.output, 0), meanColour(pan.output, 47)];
    expect(first[2] - first[0]).toBeGreaterThan(30);
    expect(last[0] - last[2]).toBeGreaterThan(30);
    // Pushing in on a white still framed in black: its black edge leaves the frame as the move goes in.
    const framed = join(dir, 'framed.png');
    execFileSync(ffmpegPath(), ['-v', 'error', '-f', 'lavfi', '-i', 'color=c=white:s=288x162', '-vf', 'pad=320:180:16:9:black', '-frames:v', '1', '-y', framed]);
    const push = await renderScenes(dir, [{ clip: framed, seconds: 2, still: 'push-in' }], FRAME, {}, join(dir, 'push.mp4'));
    expect(meanColour(push.output, 47)[0]).toBeGreaterThan(meanColour(push.output, 0)[0] + 15);
  }, 60_000);
});

describe('subtitles', () => {
  it('are cued per sentence inside each scene, two lines of at most 42 characters, and carried in the film as a track', async () => {
    const dir = tempDir();
    const wide = { ...FRAME, width: 1280, height: 720 };
    const long = 'At dawn, the fox wakes. It stretches in the cold blue light of the morning and looks down over the quiet valley below.';
    const a = await spoken(dir, 'a', long);
    const b = await spoken(dir, 'b', 'It listens for what it cannot see.');
    const [red, blue] = [colourClip(dir, 'red', 2), colourClip(dir, 'blue', 2)];
    const film = await renderScenes(dir, [
      { clip: red, seconds: a.spoken + 1, ...a, transition: crossfade(0.5) },
      { clip: blue, seconds: b.spoken + 1, ...b, narrationAt: 0.5 },
    ], wide);
    const cues = film.cues;
    expect(cues.map((c) => c.lines.join(' '))).toEqual([
      'At dawn, the fox wakes.',
      // Too long for one cue: two, their words shared out evenly, each in two lines of about one length.
      'It stretches in the cold blue light of the morning',
      'and looks down over the quiet valley below.',
      'It listens for what it cannot see.',
    ]);
    for (const c of cues) {
      expect(c.lines.length).toBeLessThanOrEqual(2);
      for (const line of c.lines) expect(line.length).toBeLessThanOrEqual(LINE_MAX);
    }
    // Scene one's cues run while its narration does; scene two's start after the crossfade into it.
    const second = film.timeline.spans[1]!.start / wide.fps;
    expect(cues[0]!.start).toBe(0);
    expect(cues[2]!.end).toBeCloseTo(a.spoken, 2);
    expect(cues[3]!.start).toBeCloseTo(second + 0.5, 2);
    expect(cues[3]!.end).toBeCloseTo(second + 0.5 + b.spoken, 2);
    const streams = execFileSync(ffprobePath(), ['-v', 'error', '-show_entries', 'stream=codec_type,codec_name', '-of', 'csv=p=0', film.output], { encoding: 'utf8' });
    expect(streams).toContain('mov_text,subtitle');
    const track = execFileSync(ffmpegPath(), ['-v', 'error', '-i', film.output, '-map', '0:s', '-f', 'srt', '-'], { encoding: 'utf8' });
    expect(track.replace(/\r/g, '')).toContain('It listens for what it cannot see.');
    expect(toSrt(cues)).toMatch(/^1\n00:00:00,000 --> 00:00:0\d,\d{3}\nAt dawn, the fox wakes.\n/);
  }, 60_000);

  it('burned in, show in the lower part of the frame at the cue\'s time, and not outside it', async () => {
    const dir = tempDir();
    const a = await spoken(dir, 'a', 'A fox in the snow.');
    const clip = colourClip(dir, 'black', 2);
    const tall = { width: 360, height: 640, fit: 'crop' as const, fps: 24 };
    const film = await renderScenes(dir, [{ clip, seconds: a.spoken + 1, ...a }], tall, { burnSubtitles: true });
    const bright = (n: number) => {
      const raw = execFileSync(ffmpegPath(), ['-v', 'error', '-i', film.output, '-vf', `select=eq(n\\,${n})`, '-vsync', '0', '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'gray', '-'], { maxBuffer: 64 << 20 });
      const rows = Array.from({ length: tall.height }, (_, y) => raw.subarray(y * tall.width, (y + 1) * tall.width).filter((v) => v > 200).length);
      return { top: rows.slice(0, tall.height / 2).reduce((s, v) => s + v, 0), bottom: rows.slice(tall.height / 2).reduce((s, v) => s + v, 0) };
    };
    const during = bright(6);
    expect(during.bottom).toBeGreaterThan(200);
    expect(during.top).toBe(0);
    const after = bright(Math.floor((a.spoken + 0.5) * 24));
    expect(after.bottom).toBe(0);
  }, 60_000);
});

describe('the sound', () => {
  it('is brought to -14 LUFS with a true peak of -1 dBTP at most, or to the loudness the storyboard asks', async () => {
    const dir = tempDir();
    const a = await spoken(dir, 'a', 'The river starts high in the mountains, where the snow melts slowly in spring.');
    const clip = colourClip(dir, 'green', 2);
    const film = await renderScenes(dir, [{ clip, seconds: a.spoken + 0.5, ...a }], FRAME);
    const measured = loudness(film.output);
    expect(Math.abs(measured.integrated + 14)).toBeLessThanOrEqual(0.5);
    expect(measured.truePeak).toBeLessThanOrEqual(-1);
    const quiet = await renderScenes(dir, [{ clip, seconds: a.spoken + 0.5, ...a }], FRAME, { loudness: -20 }, join(dir, 'quiet.mp4'));
    expect(Math.abs(loudness(quiet.output).integrated + 20)).toBeLessThanOrEqual(0.5);
  }, 60_000);

  it('lays music under the voice, looped to the film, at least 6 dB lower while someone speaks, and fades it out', async () => {
    const dir = tempDir();
    // A 15 kHz tone for music: the simulator's voice (22 kHz sampling) has nothing up there, so the band is the bed alone.
    const music = join(dir, 'music.m4a');
    execFileSync(ffmpegPath(), ['-v', 'error', '-f', 'lavfi', '-i', 'sine=f=15000:d=2', '-af', 'volume=0.3', '-ac', '2', '-c:a', 'aac', '-b:a', '192k', '-y', music]);
    const a = await spoken(dir, 'a', 'The river starts high in the mountains, where the snow melts slowly in spring.');
    const [green, blue] = [colourClip(dir, 'green', 2), colourClip(dir, 'blue', 2)];
    const film = await renderScenes(dir, [{ clip: green, seconds: a.spoken + 0.5, ...a }, { clip: blue, seconds: 5 }], FRAME, { music: { path: music, volume: -12 } });
    const speaking = highBandLevel(film.output, 1, a.spoken - 0.5);
    const between = highBandLevel(film.output, a.spoken + 1, a.spoken + 2.5);
    expect(between - speaking).toBeGreaterThanOrEqual(6);
    // The 2 s file still plays in the film's sixth second and later: looped. Its last half second is faded out.
    const film2 = film.timeline.frames / FRAME.fps;
    expect(highBandLevel(film.output, film2 - 2.5, film2 - 2)).toBeGreaterThan(-60);
    expect(highBandLevel(film.output, film2 - 0.3, film2)).toBeLessThan(between - 6);
    const measured = loudness(film.output);
    expect(Math.abs(measured.integrated + 14)).toBeLessThanOrEqual(0.5);
    expect(measured.truePeak).toBeLessThanOrEqual(-1);
    // The looped AAC loses its priming at each loop: the sound is still as long as the picture.
    const sound = (await probe(film.output)).audio!.durationSec!;
    expect(Math.abs(sound - film2)).toBeLessThan(0.05);

    // A measurement cut short (a full disk, a crash) is measured again, not read as 0 LUFS.
    for (const f of readdirSync(join(dir, 'segments')).filter((n) => n.endsWith('.loudness'))) writeFileSync(join(dir, 'segments', f), '');
    const again = await renderScenes(dir, [{ clip: green, seconds: a.spoken + 0.5, ...a }, { clip: blue, seconds: 5 }], FRAME, { music: { path: music, volume: -12 } }, join(dir, 'again.mp4'));
    expect(Math.abs(highBandLevel(again.output, a.spoken + 1, a.spoken + 2.5) - between)).toBeLessThan(1);
  }, 60_000);
});

describe('the render in pieces', () => {
  it('makes again only the pieces of a changed scene, and a damaged piece is found by its checksum and made again', async () => {
    const dir = tempDir();
    const clips = ['red', 'green', 'blue'].map((c) => colourClip(dir, c, 2));
    const scenes = (middle: string): TestScene[] => [
      { id: 'one', clip: clips[0]!, seconds: 2, transition: crossfade(0.5) },
      { id: 'two', clip: middle, seconds: 2 },
      { id: 'three', clip: clips[2]!, seconds: 2 },
    ];
    const first = await renderScenes(dir, scenes(clips[1]!), FRAME, {}, join(dir, 'first.mp4'));
    // Three bodies and the crossfade from one into two.
    expect(first.made).toHaveLength(4);
    const same = await renderScenes(dir, scenes(clips[1]!), FRAME, {}, join(dir, 'same.mp4'));
    expect(same.made).toEqual([]);
    expect(readFileSync(same.output).length).toBeGreaterThan(0);

    const yellow = colourClip(dir, 'yellow', 2);
    const changed = await renderScenes(dir, scenes(yellow), FRAME, {}, join(dir, 'changed.mp4'));
    // Scene two's body and the crossfade into it; scenes one and three as they were; the sound, unchanged, as it was.
    expect(changed.made).toHaveLength(2);
    expect(changed.reused).toHaveLength(2);
    expect([first.soundMade, changed.soundMade]).toEqual([true, false]);
    expect(frameCount(changed.output)).toBe(first.timeline.frames);
    expect(meanColour(changed.output, 60)[0]).toBeGreaterThan(200);
    expect(meanColour(changed.output, 60)[1]).toBeGreaterThan(200);

    // A byte of a kept piece changed on disk: its checksum no longer matches, so it is made again, not trusted.
    const piece = join(dir, 'segments', `${changed.reused[0]}.mp4`);
    const bytes = readFileSync(piece);
    bytes[bytes.length - 100] = bytes[bytes.length - 100]! ^ 0xff;
    writeFileSync(piece, bytes);
    const mended = await renderScenes(dir, scenes(yellow), FRAME, {}, join(dir, 'mended.mp4'));
    expect(mended.made).toEqual([changed.reused[0]]);
    expect(frameCount(mended.output)).toBe(first.timeline.frames);
    expect(readdirSync(join(dir, 'segments')).filter((f) => f.includes('.part'))).toEqual([]);

    // Another piece copied over this one with its checksum: the checksum names its own key, so it is made again.
    const [kept, other] = [mended.reused[0]!, mended.reused[1]!];
    for (const ext of ['mp4', 'sha256']) writeFileSync(join(dir, 'segments', `${kept}.${ext}`), readFileSync(join(dir, 'segments', `${other}.${ext}`)));
    const swapped = await renderScenes(dir, scenes(yellow), FRAME, {}, join(dir, 'swapped.mp4'));
    expect(swapped.made).toEqual([kept]);
  }, 90_000);

  it('refuses to burn subtitles with a damaged font, naming it, rather than burn none', async () => {
    const dir = tempDir();
    const fonts = join(dir, 'fonts');
    mkdirSync(fonts);
    writeFileSync(join(fonts, 'DejaVuSans.ttf'), readFileSync(FONT).subarray(0, 10_000));
    const a = await spoken(dir, 'a', 'A fox.');
    const attempt = renderScenes(dir, [{ clip: colourClip(dir, 'black', 1), seconds: a.spoken + 0.5, ...a }], FRAME, { burnSubtitles: true, fontsDir: fonts });
    await expect(attempt).rejects.toThrow(`the subtitle font ${join(fonts, 'DejaVuSans.ttf')} is damaged`);
  }, 60_000);

  it('names each scene as a chapter of the film', async () => {
    const dir = tempDir();
    const clips = ['red', 'blue'].map((c) => colourClip(dir, c, 1));
    const film = await renderScenes(dir, [{ id: 'dawn', clip: clips[0]!, seconds: 1, transition: crossfade(0.5) }, { id: 'hunt', clip: clips[1]!, seconds: 1.5 }], FRAME);
    const chapters = JSON.parse(execFileSync(ffprobePath(), ['-v', 'error', '-show_chapters', '-of', 'json', film.output], { encoding: 'utf8' })) as { chapters: { start_time: string; end_time: string; tags: { title: string } }[] };
    expect(chapters.chapters.map((c) => [c.tags.title, Number(c.start_time), Number(c.end_time)])).toEqual([['dawn', 0, 0.5], ['hunt', 0.5, 2]]);
  }, 60_000);
});
