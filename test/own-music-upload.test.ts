import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { storedStoryboard } from './helpers/browser.ts';
import { refusedWhileStreaming, uploadStudio } from './helpers/uploads.ts';
import { chordFile } from './helpers/film.ts';
import { tempDir } from './helpers/tmp.ts';

const studio = () => uploadStudio('/upload/music?project=Fox');

describe('music sent from the app for the music bed', () => {
  it('is checked and copied into the project under its checksum, played from there, and named in the estimate once the storyboard has it', async () => {
    const { dir, host, base, token, upload, api, kept } = await studio();
    try {
      const bytes = readFileSync(chordFile(join(tempDir(), 'bed.m4a'), 2));
      const sum = createHash('sha256').update(bytes).digest('hex');
      const answer = await upload('bed.m4a', new Uint8Array(bytes));
      expect(answer.status).toBe(200);
      const { result } = (await answer.json()) as { result: { music: { file: string; sha256: string; name: string } } };
      expect(result).toEqual({ music: { file: join(dir, 'projects', '1', 'media', `own-${sum}.m4a`), sha256: sum, name: 'bed.m4a' }, name: 'bed.m4a' });
      expect(readFileSync(result.music.file)).toEqual(bytes);
      expect(kept()).toEqual([`own-${sum}.m4a`]);
      const played = await fetch(`${base.origin}/media/own/Fox/${sum}?token=${token}`);
      expect(played.headers.get('content-type')).toBe('audio/mp4');
      expect(Buffer.from(await played.arrayBuffer())).toEqual(bytes);
      expect((await fetch(`${base.origin}/upload/music?project=Fox&name=bed.m4a`, { method: 'POST', body: new Uint8Array(bytes) })).status).toBe(401);

      // The app then saves the storyboard with it as its music: the estimate names it as it was sent, not by its copy.
      const board = (await api('getStoryboard', 'Fox')).result as Record<string, unknown>;
      const saved = await api('saveStoryboard', 'Fox', { ...board, music: result.music });
      expect(saved.error).toBeUndefined();
      expect(JSON.parse(storedStoryboard(dir, 'Fox')).music).toEqual({ ...result.music, volume: -12 });
      const estimate = (await api('estimate', 'Fox')).result as { film: { text: string } };
      expect(estimate.film.text).toContain('music under the voice (yours: bed.m4a, 12 LU under it, lower while someone speaks)');
    } finally {
      host.child.kill('SIGTERM');
      await host.exited;
    }
  }, 60_000);

  it('refuses what is no music by its name or by its content, and what is too large, even unannounced, keeping nothing', async () => {
    const { dir, host, upload, announce, kept } = await studio();
    try {
      const before = storedStoryboard(dir, 'Fox');
      const picture = await upload('fox.png', 'not read\n');
      expect(picture.status).toBe(400);
      expect(((await picture.json()) as { error: string }).error).toBe('music: fox.png is not a music file the studio takes; give an MP3, M4A, AAC, WAV, FLAC, OGG or Opus file');
      const words = await upload('notes.mp3', 'only words\n');
      expect(words.status).toBe(400);
      expect(((await words.json()) as { error: string }).error).toBe('music: notes.mp3 has no sound; give a music file (MP3, M4A, AAC, WAV, FLAC, OGG or Opus)');

      // Announced as too large: answered before the body is read.
      const announced = await announce('huge.wav', 301 * 1024 * 1024);
      expect(announced.status).toBe(413);
      expect(JSON.parse(announced.body).error).toBe('music: huge.wav is more than the 300 MB a music file may be; save it smaller');
      // Sent in pieces with no length given: refused as it streams, once past the limit.
      await refusedWhileStreaming(upload, 'endless.flac', 600, 'endless.flac is more than the 300 MB a music file may be');
      await expect.poll(kept).toEqual([]);
      expect(storedStoryboard(dir, 'Fox')).toBe(before);
    } finally {
      host.child.kill('SIGTERM');
      await host.exited;
    }
  }, 120_000);
});
