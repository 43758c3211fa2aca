import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ffmpegPath } from '../main/media/binaries.ts';
import { desktopOwn } from './helpers/desktopOwn.ts';
import { tempDir } from './helpers/tmp.ts';

const desktop = () => desktopOwn('studio:own-music');

describe('music picked in the desktop app, by the file\'s path', () => {
  it('is checked and copied into the project under its checksum, as an upload of music is', async () => {
    const { dir, call, media } = await desktop();
    const file = join(tempDir(), 'my bed.wav');
    expect(spawnSync(ffmpegPath(), ['-v', 'error', '-f', 'lavfi', '-i', 'sine=f=220:d=1', '-y', file]).status).toBe(0);
    const sum = createHash('sha256').update(readFileSync(file)).digest('hex');
    expect(await call(['Fox', file])).toEqual({ result: { music: { file: join(dir, 'projects', '1', 'media', `own-${sum}.wav`), sha256: sum, name: 'my bed.wav' }, name: 'my bed.wav' } });
    expect(readdirSync(media)).toEqual([`own-${sum}.wav`]);
  });

  it('refuses no music, no file, no full path and calls from elsewhere, in words, copying nothing', async () => {
    const { call, media } = await desktop();
    const notes = join(tempDir(), 'notes.ogg');
    writeFileSync(notes, 'only words\n');
    expect(await call(['Fox', notes])).toEqual({ error: 'music: notes.ogg has no sound; give a music file (MP3, M4A, AAC, WAV, FLAC, OGG or Opus)' });
    expect(await call(['Fox', join(tempDir(), 'fox.png')])).toEqual({ error: 'music: fox.png is not a music file the studio takes; give an MP3, M4A, AAC, WAV, FLAC, OGG or Opus file' });
    expect(await call(['Fox', ''])).toEqual({ error: 'music: that file is not on this computer; save it to a folder first, then pick the saved file' });
    expect(await call(['Fox', 'bed.mp3'])).toEqual({ error: 'music: "bed.mp3" is not a full path to a file on this computer; pick the file again' });
    expect(await call(['Nope', notes])).toEqual({ error: 'there is no project "Nope"' });
    expect(await call(['Fox', notes], 'https://example.com/')).toEqual({ error: 'refused: the call did not come from the studio window' });
    for (const bad of [['Fox'], ['Fox', 7], ['', notes], ['Fox', notes, 'more'], 'Fox']) expect(await call(bad)).toEqual({ error: 'refused: useOwnMusic takes a project and a file' });
    expect(() => readdirSync(media)).toThrow();
  });
});
