import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkOwnPictureCall, IpcRefused } from '../app/ipcValidation.ts';
import { mediaResponse } from '../app/mediaProtocol.ts';
import { ownPicturePath } from '../main/api/ownUpload.ts';
import { ffmpegPath } from '../main/media/binaries.ts';
import { APP_PAGE, desktopOwn } from './helpers/desktopOwn.ts';
import { tempDir } from './helpers/tmp.ts';

/** A real PNG made by ffmpeg. */
function png(path: string): string {
  expect(spawnSync(ffmpegPath(), ['-v', 'error', '-f', 'lavfi', '-i', 'color=c=orange:s=320x240', '-frames:v', '1', '-y', path]).status).toBe(0);
  return path;
}

const desktop = () => desktopOwn('studio:own');

describe('"Use your own picture" in the desktop app, by the file\'s path', () => {
  it('checks and copies the picture into the project under its checksum, as an upload does, and shows it over studio-media://own', async () => {
    const { dir, studio, call, media } = await desktop();
    const file = png(join(tempDir(), 'my fox.png'));
    const sum = createHash('sha256').update(readFileSync(file)).digest('hex');

    const answer = await call(['Fox', 'dawn', file]);
    expect(answer).toEqual({ result: { image: { file: join(dir, 'projects', '1', 'media', `own-${sum}.png`), sha256: sum, name: 'my fox.png' }, name: 'my fox.png' } });
    expect(readdirSync(media)).toEqual([`own-${sum}.png`]);

    const shown = await mediaResponse(new Request(`studio-media://own/Fox/${sum}`), async () => null, (project, sha) => ownPicturePath(studio, project, sha));
    expect(shown.status).toBe(200);
    expect(shown.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await shown.arrayBuffer())).toEqual(readFileSync(file));
    expect((await mediaResponse(new Request(`studio-media://own/Other/${sum}`), async () => null, (p, s) => ownPicturePath(studio, p, s))).status).toBe(404);
  });

  it('takes a clip by its path too: the scene\'s clip is set to the copy, shown over studio-media://own as a video; a still named .mp4 is refused', async () => {
    const { dir, studio, call, media } = await desktop();
    const file = join(tempDir(), 'my walk.mp4');
    expect(spawnSync(ffmpegPath(), ['-v', 'error', '-f', 'lavfi', '-i', 'color=c=green:s=320x240:r=12:d=1', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-y', file]).status).toBe(0);
    const sum = createHash('sha256').update(readFileSync(file)).digest('hex');
    expect(await call(['Fox', 'dawn', file])).toEqual({ result: { clip: { file: join(dir, 'projects', '1', 'media', `own-${sum}.mp4`), sha256: sum, name: 'my walk.mp4' }, name: 'my walk.mp4' } });
    expect(readdirSync(media)).toEqual([`own-${sum}.mp4`]);
    const shown = await mediaResponse(new Request(`studio-media://own/Fox/${sum}`), async () => null, (project, sha) => ownPicturePath(studio, project, sha));
    expect(shown.headers.get('content-type')).toBe('video/mp4');

    const still = join(tempDir(), 'still.mp4');
    expect(spawnSync(ffmpegPath(), ['-v', 'error', '-f', 'lavfi', '-i', 'color=c=orange:s=320x240', '-frames:v', '1', '-c:v', 'png', '-f', 'image2', '-y', still]).status).toBe(0);
    expect(await call(['Fox', 'dawn', still])).toEqual({ error: 'scene "dawn": still.mp4 is a still picture, not a clip; use it as the scene\'s "image" instead, or give a video' });
  });

  it('refuses what is no picture, no file on disk or no full path in words, and copies nothing', async () => {
    const { call, media } = await desktop();
    const notes = join(tempDir(), 'notes.png');
    writeFileSync(notes, 'only words\n');
    expect(await call(['Fox', 'dawn', notes])).toEqual({ error: 'scene "dawn": notes.png is not a PNG, JPEG or WebP picture; give a still in one of those formats' });
    expect(await call(['Fox', 'dawn', ''])).toEqual({ error: 'scene "dawn": that picture is not a file on this computer; save it to a folder first, then drop or pick the saved file' });
    expect(await call(['Fox', 'dawn', 'fox.png'])).toEqual({ error: 'scene "dawn": "fox.png" is not a full path to a picture on this computer; pick the file again' });
    expect(await call(['Fox', 'dawn', join(tempDir(), 'gone.png')])).toMatchObject({ error: expect.stringMatching(/^scene "dawn": there is no file at .*gone\.png; put the picture there or change the path$/) });
    expect(await call(['Nope', 'dawn', notes])).toEqual({ error: 'there is no project "Nope"' });
    expect(() => readdirSync(media)).toThrow();
  });

  it('takes calls only from the app\'s own page in the main frame, with a project, a scene and a path', async () => {
    const { call } = await desktop();
    const file = png(join(tempDir(), 'fox.png'));
    expect(await call(['Fox', 'dawn', file], 'https://example.com/')).toEqual({ error: 'refused: the call did not come from the studio window' });
    expect(await call(['Fox', 'dawn', file], APP_PAGE.url, { child: true })).toEqual({ error: 'refused: the call did not come from the studio window' });
    for (const bad of [['Fox', 'dawn'], ['Fox', 'dawn', 7], ['', 'dawn', file], ['Fox', 'dawn', file, 'more'], 'Fox', ['Fox', 'dawn', 'x'.repeat(5_000)]]) {
      expect(() => checkOwnPictureCall(bad, APP_PAGE)).toThrow(IpcRefused);
      expect(await call(bad)).toEqual({ error: 'refused: useOwnPicture takes a project, a scene and a file' });
    }
    expect(() => checkOwnPictureCall(['Fox', 'dawn', file], { ...APP_PAGE, isMainFrame: false })).toThrow('refused: the call did not come from the studio window');
    expect(() => checkOwnPictureCall(['Fox', 'dawn', ''], APP_PAGE)).not.toThrow();
  });
});
