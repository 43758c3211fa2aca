import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ffmpegPath } from '../main/media/binaries.ts';
import { isStalePart, MACHINE } from '../main/media/staleParts.ts';
import { cli } from './helpers/cli.ts';
import { writeSettings } from './helpers/processes.ts';
import { simulatedFolderForTest, simulatorForTest } from './helpers/running.ts';
import { tempDir } from './helpers/tmp.ts';

const mounts: string[] = [];
afterEach(() => {
  for (const m of mounts.splice(0)) spawnSync('umount', ['-l', m]);
});

/** A real file made by ffmpeg from a lavfi source. */
function made(path: string, args: string[]): string {
  expect(spawnSync(ffmpegPath(), ['-v', 'error', ...args, '-y', path]).status).toBe(0);
  return path;
}
const png = (path: string, color = 'orange', size = '320x240') => made(path, ['-f', 'lavfi', '-i', `color=c=${color}:s=${size}`, '-frames:v', '1']);
const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

async function board(dir: string, project: string, scenes: object[], extra: object = {}) {
  const file = join(dir, `${project}-${Date.now()}.json`);
  writeFileSync(file, JSON.stringify({ width: 320, height: 240, fps: 12, ...extra, scenes }));
  return cli(dir, 'storyboard', 'create', project, '--file', file);
}

const tasksOf = async (dir: string) => JSON.parse((await cli(dir, 'tasks', '--json')).out) as { id: number; kind: string; status: string; projectId?: number }[];

describe('your own files are checked whole before anything is bought', () => {
  it('a PNG cut short is refused at the estimate and at Generate, and nothing is bought', async () => {
    const { sim, dir } = await simulatedFolderForTest();
    const whole = made(join(tempDir(), 'whole.png'), ['-f', 'lavfi', '-i', 'testsrc=s=640x480', '-frames:v', '1']);
    const cut = join(tempDir(), 'cut.png');
    writeFileSync(cut, readFileSync(whole).subarray(0, Math.floor(statSync(whole).size / 2)));
    expect((await board(dir, 'P', [{ id: 'a', imagePrompt: 'p', duration: 1, image: { file: cut } }])).code).toBe(0);
    for (const verb of ['estimate', 'generate']) {
      const r = await cli(dir, verb, 'P');
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/scene 1 \("a"\) image: .*cut\.png is damaged or cut short .*save or export it again whole/);
    }
    expect(await tasksOf(dir)).toEqual([]);
    expect(sim.charges).toEqual([]);
  }, 60_000);

  it('a clip cut short is refused; a whole clip is taken', async () => {
    const { dir } = await simulatedFolderForTest();
    const whole = made(join(tempDir(), 'whole.mp4'), ['-f', 'lavfi', '-i', 'testsrc=s=320x240:r=12:d=4', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-movflags', '+faststart']);
    const cut = join(tempDir(), 'cut.mp4');
    writeFileSync(cut, readFileSync(whole).subarray(0, Math.floor(statSync(whole).size * 0.6)));
    expect((await board(dir, 'P', [{ id: 'a', imagePrompt: 'p', duration: 2, clip: { file: cut } }])).code).toBe(0);
    const refused = await cli(dir, 'estimate', 'P');
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/cut\.mp4 is damaged or cut short/);
    expect((await board(dir, 'Q', [{ id: 'a', imagePrompt: 'p', duration: 2, clip: { file: whole } }])).code).toBe(0);
    expect((await cli(dir, 'estimate', 'Q')).code).toBe(0);
  }, 60_000);

  it('an animated PNG given as a clip is refused as what it is', async () => {
    const { dir } = await simulatedFolderForTest();
    const apng = made(join(tempDir(), 'anim.png'), ['-f', 'lavfi', '-i', 'testsrc=s=64x48:r=5:d=1', '-plays', '0', '-f', 'apng']);
    expect((await board(dir, 'P', [{ id: 'a', imagePrompt: 'p', duration: 1, clip: { file: apng } }])).code).toBe(0);
    const r = await cli(dir, 'estimate', 'P');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/anim\.png is an animated PNG.*export it as a video/);
  }, 30_000);

  it('the simulator fails a clip it cannot make from its image, so the worker ends', async () => {
    const sim = await simulatorForTest({ jobMs: 20 });
    const image = `data:image/png;base64,${Buffer.from('not a picture').toString('base64')}`;
    const sent = await fetch(`${sim.url}/v1/clip/sim-clip-1/requests`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: { image_url: image, duration: 1 } }) });
    const { request_id: id } = (await sent.json()) as { request_id: string };
    let status: { status: string; error?: string } = { status: '' };
    for (let i = 0; i < 100 && status.status !== 'FAILED'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      status = (await (await fetch(`${sim.url}/v1/requests/${id}/status`)).json()) as typeof status;
      if (status.status === 'COMPLETED') await fetch(`${sim.url}/v1/requests/${id}/result`);
    }
    expect(status.status).toBe('FAILED');
    expect(status.error).toMatch(/could not use its input/);
  }, 30_000);
});

describe('an own still the clip model cannot take', () => {
  const kling = { steps: { clip: { provider: 'fal', model: 'fal-ai/kling-video/v2.1/standard/image-to-video' } }, width: 1280, height: 720 };

  it('is refused before anything is bought when it is too small or too long; a still far from the frame shape is warned of', async () => {
    const dir = tempDir();
    writeSettings(dir, { providers: { simulator: { baseUrl: 'http://127.0.0.1:9' } } });
    for (const [name, size] of [['tiny', '100x100'], ['pano', '1600x400']] as const) {
      const still = png(join(tempDir(), `${name}.png`), 'orange', size);
      expect((await board(dir, name, [{ id: 'a', imagePrompt: 'p', duration: 5, image: { file: still } }], kling)).code).toBe(0);
      const r = await cli(dir, 'estimate', name);
      expect(r.code).toBe(2);
      expect(r.err).toContain(`scene "a": your still is ${size}, and fal-ai/kling-video/v2.1/standard/image-to-video makes a clip only from a still of at least 300 pixels a side and from 1:2.5 to 2.5:1`);
    }
    const tall = png(join(tempDir(), 'tall.png'), 'orange', '400x720');
    expect((await board(dir, 'tall', [{ id: 'a', imagePrompt: 'p', duration: 5, image: { file: tall } }], kling)).code).toBe(0);
    const warned = await cli(dir, 'estimate', 'tall');
    expect(warned.code).toBe(0);
    expect(warned.out).toMatch(/scene "a": your still is 1:1\.8 and the frame 1\.78:1; .* makes its clip in the still's shape/);
  }, 60_000);
});

describe('an own still edited or gone after it was copied', () => {
  it('an edited picture at the same path is copied anew and its clip made again; a deleted one is used from the copy', async () => {
    const { dir } = await simulatedFolderForTest();
    const still = png(join(tempDir(), 'mine.png'), 'orange');
    expect((await board(dir, 'P', [{ id: 'a', imagePrompt: 'p', duration: 1, image: { file: still } }])).code).toBe(0);
    expect((await cli(dir, 'generate', 'P')).code).toBe(0);
    expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
    png(still, 'blue');
    const estimate = await cli(dir, 'estimate', 'P');
    expect(estimate.out).toMatch(/a:image\s+yours.*mine\.png \(changed since it was copied: the new version is used and the clip is made again\)/);
    expect(estimate.out).toMatch(/a:clip\s+new/);
    expect((await cli(dir, 'generate', 'P')).code).toBe(0);
    expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
    const shown = JSON.parse((await cli(dir, 'storyboard', 'show', 'P', '--json')).out) as { scenes: { image: { sha256: string } }[] };
    expect(shown.scenes[0]!.image.sha256).toBe(sha(still));
    expect(readdirSync(join(dir, 'projects', '1', 'media'))).toContain(`own-${sha(still)}.png`);
    expect((await tasksOf(dir)).filter((t) => t.kind === 'clip')).toHaveLength(2);
    rmSync(still);
    const gone = await cli(dir, 'estimate', 'P');
    expect(gone.code).toBe(0);
    expect(gone.out).toMatch(/mine\.png \(the original is gone from .*; the project's copy is used\)/);
    expect(gone.out).toMatch(/a:clip\s+reuse/);
  }, 60_000);

  it('a file that changes while it is copied is refused, and no copy bears a checksum it does not have', async () => {
    const { dir } = await simulatedFolderForTest();
    const still = png(join(tempDir(), 'mine.png'), 'orange');
    // A whole second, so that putting the time back below gives the very same time.
    utimesSync(still, 1_700_000_000, 1_700_000_000);
    expect((await board(dir, 'P', [{ id: 'a', imagePrompt: 'p', duration: 1, image: { file: still } }])).code).toBe(0);
    expect((await cli(dir, 'estimate', 'P')).code).toBe(0);
    // Rewritten to the same size with its time put back: the checksum read before is still believed (checksumCache.ts).
    const { size } = statSync(still);
    const other = png(join(tempDir(), 'other.png'), 'blue');
    writeFileSync(still, Buffer.concat([readFileSync(other), Buffer.alloc(Math.max(0, size - statSync(other).size))]));
    truncateSync(still, size);
    utimesSync(still, 1_700_000_000, 1_700_000_000);
    const r = await cli(dir, 'generate', 'P');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/mine\.png changed while it was being copied; wait until it is saved, then try again/);
    const media = join(dir, 'projects', '1', 'media');
    for (const name of existsSync(media) ? readdirSync(media) : []) expect(name).toBe(`own-${sha(join(media, name))}.png`);
    expect(await tasksOf(dir)).toEqual([]);
  }, 60_000);
});

describe('a cross-project library result and disk faults', () => {
  it('an image task of another project is taken, and the estimate names that project', async () => {
    const { dir } = await simulatedFolderForTest();
    expect((await board(dir, 'A', [{ id: 'a', imagePrompt: 'fox', duration: 1 }])).code).toBe(0);
    expect((await cli(dir, 'generate', 'A')).code).toBe(0);
    expect((await cli(dir, 'worker', '--until-idle')).code).toBe(0);
    const image = (await tasksOf(dir)).find((t) => t.kind === 'image')!;
    expect((await board(dir, 'B', [{ id: 'b', imagePrompt: 'x', duration: 1, image: { task: image.id } }])).code).toBe(0);
    const r = await cli(dir, 'estimate', 'B');
    expect(r.code).toBe(0);
    expect(r.out).toContain(`yours: the image of task ${image.id} (of project "A")`);
  }, 60_000);

  // A real full disk is a small tmpfs, which only root may mount.
  it.skipIf(process.getuid?.() !== 0)('a full disk at Generate exits 2 in plain words, keeps no part file, and dead copies\' part files are swept', async () => {
    const disk = tempDir();
    expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=3M', 'tmpfs', disk]).status).toBe(0);
    mounts.push(disk);
    const dir = join(disk, 'data');
    mkdirSync(dir);
    writeSettings(dir, { providers: { simulator: { baseUrl: 'http://127.0.0.1:9' } } });
    const noise = made(join(tempDir(), 'noise.png'), ['-f', 'lavfi', '-i', 'nullsrc=s=2000x2000,geq=random(1)*255:128:128', '-frames:v', '1']);
    expect(statSync(noise).size).toBeGreaterThan(3 * 1024 * 1024);
    expect((await board(dir, 'P', [{ id: 'a', imagePrompt: 'p', duration: 1, image: { file: noise } }])).code).toBe(0);
    const media = join(dir, 'projects', '1', 'media');
    mkdirSync(media, { recursive: true });
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    const deadPart = `own-${'0'.repeat(64)}.png.${dead}@${MACHINE}-abcd.part`;
    const livePart = `own-${'1'.repeat(64)}.png.${process.pid}@${MACHINE}-abcd.part`;
    const otherMachine = `own-${'2'.repeat(64)}.png.${dead}@ffffffff-abcd.part`;
    // A paid result staged before a crash, a day old: the engine collects it at its next start, so no sweep takes it.
    const staged = 'task-7-a1.png.0badc0de.part';
    for (const name of [deadPart, livePart, otherMachine, staged]) writeFileSync(join(media, name), 'x');
    const dayAgo = new Date(Date.now() - 24 * 60 * 60 * 1000);
    utimesSync(join(media, staged), dayAgo, dayAgo);
    const r = await cli(dir, 'generate', 'P');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/scene 1 \("a"\) image: the disk is full; free some space \(the copy of .*noise\.png needs about \d+ MB\) and try again/);
    expect(r.err).not.toMatch(/ENOSPC|    at /);
    expect(readdirSync(media).sort()).toEqual([livePart, otherMachine, staged].sort());
    expect(isStalePart(otherMachine, 2 * 60 * 60 * 1000)).toBe(true);
    expect(isStalePart(staged, 24 * 60 * 60 * 1000)).toBe(false);
  }, 60_000);
});
