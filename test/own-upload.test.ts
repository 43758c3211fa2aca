import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ffmpegPath } from '../main/media/binaries.ts';
import { storedStoryboard } from './helpers/browser.ts';
import { refusedWhileStreaming, uploadStudio } from './helpers/uploads.ts';
import { tempDir } from './helpers/tmp.ts';

/** A real PNG made by ffmpeg. */
function png(path: string): Buffer {
  expect(spawnSync(ffmpegPath(), ['-v', 'error', '-f', 'lavfi', '-i', 'color=c=orange:s=320x240', '-frames:v', '1', '-y', path]).status).toBe(0);
  return readFileSync(path);
}

const studio = () => uploadStudio('/upload/picture?project=Fox&scene=dawn');

describe('a picture sent from the app', () => {
  it('is checked and copied into the project under its checksum, and shown from there', async () => {
    const { base, token, upload, kept, dir } = await studio();
    const bytes = png(join(tempDir(), 'mine.png'));
    const sum = createHash('sha256').update(bytes).digest('hex');
    const answer = await upload('mine.png', new Uint8Array(bytes));
    expect(answer.status).toBe(200);
    const { result } = (await answer.json()) as { result: { image: { file: string; sha256: string }; name: string } };
    expect(result).toEqual({ image: { file: join(dir, 'projects', '1', 'media', `own-${sum}.png`), sha256: sum, name: 'mine.png' }, name: 'mine.png' });
    expect(readFileSync(result.image.file)).toEqual(bytes);
    expect(kept()).toEqual([`own-${sum}.png`]);
    const shown = await fetch(`${base.origin}/media/own/Fox/${sum}?token=${token}`);
    expect(shown.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await shown.arrayBuffer())).toEqual(bytes);
    expect((await fetch(`${base.origin}/media/own/Fox/${sum}`)).status).toBe(401);
    expect((await fetch(`${base.origin}/upload/picture?project=Fox&scene=dawn&name=x.png`, { method: 'POST', body: new Uint8Array(bytes) })).status).toBe(401);
  }, 60_000);

  it('refuses what is not a picture and what is too large, even unannounced, keeping nothing and leaving the storyboard as it was', async () => {
    const { upload, announce, kept, dir } = await studio();
    const before = storedStoryboard(dir, 'Fox');
    const text = await upload('notes.png', 'only words\n');
    expect(text.status).toBe(400);
    expect(((await text.json()) as { error: string }).error).toBe('scene "dawn": notes.png is not a PNG, JPEG or WebP picture; give a still in one of those formats');

    // Announced as too large: answered before the body is read, and the connection closed.
    const announced = await announce('huge.png', 51 * 1024 * 1024);
    expect(announced.status).toBe(413);
    expect(JSON.parse(announced.body).error).toBe('scene "dawn": huge.png is more than the 50 MB a still may be; save it smaller');
    // Sent in pieces with no length given: refused as it streams, once past the limit.
    await refusedWhileStreaming(upload, 'endless.png', 200, 'endless.png is more than the 50 MB a still may be');
    expect(kept()).toEqual([]);
    expect(storedStoryboard(dir, 'Fox')).toBe(before);
  }, 60_000);

  it('a clip (by its name) is copied as the scene\'s clip and held to a clip\'s limit (1024 MB), not a still\'s', async () => {
    const { upload, announce, kept, dir, base, token } = await studio();
    const clip = join(tempDir(), 'walk.mp4');
    expect(spawnSync(ffmpegPath(), ['-v', 'error', '-f', 'lavfi', '-i', 'color=c=green:s=320x240:r=12:d=1', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-y', clip]).status).toBe(0);
    const bytes = readFileSync(clip);
    const sum = createHash('sha256').update(bytes).digest('hex');
    const answer = await upload('walk.mp4', new Uint8Array(bytes));
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { result: unknown }).result).toEqual({ clip: { file: join(dir, 'projects', '1', 'media', `own-${sum}.mp4`), sha256: sum, name: 'walk.mp4' }, name: 'walk.mp4' });
    expect((await fetch(`${base.origin}/media/own/Fox/${sum}?token=${token}`)).headers.get('content-type')).toBe('video/mp4');
    // Announced past a clip's limit: refused before its body is read.
    const huge = await announce('huge.mov', 1025 * 1024 * 1024);
    expect(huge.status).toBe(413);
    expect(JSON.parse(huge.body).error).toBe('scene "dawn": huge.mov is more than the 1024 MB a clip may be; save it smaller');
    expect(kept()).toEqual([`own-${sum}.mp4`]);
  }, 60_000);

  it('cut off mid-way leaves nothing half-saved', async () => {
    const { base, token, kept } = await studio();
    const bytes = png(join(tempDir(), 'mine.png'));
    const req = request(`${base.origin}/upload/picture?project=Fox&scene=dawn&name=mine.png`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-length': String(bytes.length + 4 * 1024 * 1024) },
    });
    req.on('error', () => undefined);
    req.write(bytes);
    req.write(new Uint8Array(1024 * 1024));
    await new Promise((r) => setTimeout(r, 300));
    expect(kept().some((f) => f.startsWith('upload-'))).toBe(true);
    req.destroy();
    await expect.poll(kept, { timeout: 5_000 }).toEqual([]);
  }, 60_000);
});
