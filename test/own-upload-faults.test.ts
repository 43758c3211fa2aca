import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ffmpegPath } from '../main/media/binaries.ts';
import { MACHINE } from '../main/media/staleParts.ts';
import { NO_PROVIDER, serve } from './helpers/browser.ts';
import { cli } from './helpers/cli.ts';
import { tempDir } from './helpers/tmp.ts';

const mounts: string[] = [];
afterEach(() => {
  // The hosts are killed by the process helpers after each test; the disks are let go after them.
  for (const m of mounts.splice(0)) spawnSync('umount', ['-l', m]);
});

function made(path: string, args: string[]): Buffer {
  expect(spawnSync(ffmpegPath(), ['-v', 'error', ...args, '-y', path]).status).toBe(0);
  return readFileSync(path);
}

async function studio(dir = tempDir()) {
  const file = join(tempDir(), 'board.json');
  writeFileSync(file, JSON.stringify({ width: 320, height: 240, scenes: [{ id: 'dawn', imagePrompt: 'a fox' }] }));
  expect((await cli(dir, 'storyboard', 'create', 'Fox', '--file', file)).code).toBe(0);
  const { url } = await serve(dir, NO_PROVIDER);
  const base = new URL(url);
  const token = new URLSearchParams(base.hash.slice(1)).get('token')!;
  const upload = (name: string, body: Uint8Array, scene = 'dawn') =>
    fetch(`${base.origin}/upload/picture?project=Fox&scene=${scene}&name=${encodeURIComponent(name)}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: body as BodyInit,
      signal: AbortSignal.timeout(20_000),
    });
  return { dir, base, token, upload };
}

describe('an upload the studio cannot keep', () => {
  // A real full disk is a small tmpfs, which only root may mount.
  it.skipIf(process.getuid?.() !== 0)('a full disk is answered 507 in words with the room the picture needs, and nothing is kept', async () => {
    const disk = tempDir();
    expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=3M', 'tmpfs', disk]).status).toBe(0);
    mounts.push(disk);
    const { upload, dir } = await studio(join(disk, 'data'));
    const noise = made(join(tempDir(), 'noise.png'), ['-f', 'lavfi', '-i', 'nullsrc=s=2000x2000,geq=random(1)*255:128:128', '-frames:v', '1']);
    const answer = await upload('noise.png', new Uint8Array(noise));
    expect(answer.status).toBe(507);
    expect(((await answer.json()) as { error: string }).error).toMatch(/^scene "dawn": the disk is full; free some space \(noise\.png, received and then copied, needs about \d+ MB\) and try again/);
    expect(existsSync(join(dir, 'uploads')) ? readdirSync(join(dir, 'uploads')) : []).toEqual([]);
  }, 60_000);

  it('part files of uploads whose host was killed are swept when a host starts; a live host\'s are not', async () => {
    const dir = tempDir();
    const uploads = join(dir, 'uploads');
    mkdirSync(uploads, { recursive: true });
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    const deadPart = `upload-${dead}@${MACHINE}-00aa.part`;
    const livePart = `upload-${process.pid}@${MACHINE}-00bb.part`;
    const oldUnnamed = 'upload-00cc.part';
    for (const name of [deadPart, livePart, oldUnnamed]) writeFileSync(join(uploads, name), 'x');
    utimesSync(join(uploads, oldUnnamed), new Date(Date.now() - 2 * 3600_000), new Date(Date.now() - 2 * 3600_000));
    const { upload } = await studio(dir);
    expect(readdirSync(uploads)).toEqual([livePart]);
    const png = made(join(tempDir(), 'mine.png'), ['-f', 'lavfi', '-i', 'color=c=orange:s=320x240', '-frames:v', '1']);
    expect((await upload('mine.png', new Uint8Array(png))).status).toBe(200);
    expect(readdirSync(uploads)).toEqual([livePart]);
  }, 60_000);
});

describe('what an upload must name and how its picture is read back', () => {
  it('refuses a scene the storyboard does not have, and a token in the address of a POST; serves a Range of an own file', async () => {
    const { upload, base, token, dir } = await studio();
    const png = made(join(tempDir(), 'mine.png'), ['-f', 'lavfi', '-i', 'testsrc=s=320x240', '-frames:v', '1']);
    const nowhere = await upload('mine.png', new Uint8Array(png), 'nowhere');
    expect(nowhere.status).toBe(400);
    expect(((await nowhere.json()) as { error: string }).error).toBe(
      'there is no scene "nowhere" in the saved storyboard of "Fox" (its scenes are "dawn"); save the storyboard with that scene first, then send the picture',
    );
    expect(existsSync(join(dir, 'projects', '1', 'media')) ? readdirSync(join(dir, 'projects', '1', 'media')) : []).toEqual([]);

    const byAddress = await fetch(`${base.origin}/upload/picture?project=Fox&scene=dawn&name=x.png&token=${token}`, { method: 'POST', body: new Uint8Array(png) });
    expect(byAddress.status).toBe(401);
    const apiByAddress = await fetch(`${base.origin}/api/listProjects?token=${token}`, { method: 'POST', body: '[]' });
    expect(apiByAddress.status).toBe(401);

    expect((await upload('mine.png', new Uint8Array(png))).status).toBe(200);
    const sum = createHash('sha256').update(png).digest('hex');
    const part = await fetch(`${base.origin}/media/own/Fox/${sum}?token=${token}`, { headers: { range: 'bytes=10-19' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 10-19/${png.length}`);
    expect(part.headers.get('accept-ranges')).toBe('bytes');
    expect(Buffer.from(await part.arrayBuffer())).toEqual(png.subarray(10, 20));
    expect((await fetch(`${base.origin}/media/own/Fox/${sum}?token=${token}`, { headers: { range: `bytes=${png.length}-` } })).status).toBe(416);
  }, 60_000);
});
