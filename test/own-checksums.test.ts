import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ffmpegPath } from '../main/media/binaries.ts';
import { sha256File } from '../main/media/checksum.ts';
import { ChecksumCache } from '../main/media/checksumCache.ts';
import { dataFolderMedia } from '../main/media/mediaFolder.ts';
import { CLIP } from '../main/pipeline/ownClips.ts';
import { ownChecksums, ownFile } from '../main/pipeline/ownFiles.ts';
import { tempDir } from './helpers/tmp.ts';

const sumOf = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

describe('checksums of your own files, kept by path, size and modification time', () => {
  it('reads an unchanged file once, and a file changed in size or time again', async () => {
    const file = join(tempDir(), 'clip.bin');
    writeFileSync(file, 'first version');
    const read: string[] = [];
    const sums = new ChecksumCache(async (path) => (read.push(path), sha256File(path)));

    expect(await sums.of(file)).toBe(sumOf(file));
    expect(await sums.of(file)).toBe(sumOf(file));
    expect(read).toHaveLength(1);

    appendFileSync(file, ' and more');
    expect(await sums.of(file)).toBe(sumOf(file));
    expect(read).toHaveLength(2);

    // Same size, new content, a later modification time: read again.
    const before = statSync(file);
    writeFileSync(file, 'FIRST VERSION and more');
    utimesSync(file, before.atime, new Date(before.mtimeMs + 5_000));
    expect(await sums.of(file)).toBe(sumOf(file));
    expect(read).toHaveLength(3);
  });

  it('an estimate run twice on the same clip reads it once, and the copy once after it is made', async () => {
    const dir = tempDir();
    const clip = join(dir, 'mine.mp4');
    const made = spawnSync(ffmpegPath(), ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=s=160x120:d=1', '-pix_fmt', 'yuv420p', '-y', clip]);
    expect(made.status).toBe(0);
    const media = dataFolderMedia(join(dir, 'data'), 'here');
    const project = { id: 1 };

    const start = ownChecksums.reads;
    const first = await ownFile({ file: clip }, CLIP, project, media, 'scene 1', false);
    const second = await ownFile({ file: clip }, CLIP, project, media, 'scene 1', false);
    expect(second.sha256).toBe(first.sha256);
    expect(ownChecksums.reads - start).toBe(1);

    // Generate copies it; after that each estimate checks the copy by its checksum, read once.
    await ownFile({ file: clip }, CLIP, project, media, 'scene 1', true);
    const afterCopy = ownChecksums.reads;
    await ownFile({ file: clip, sha256: first.sha256 }, CLIP, project, media, 'scene 1', false);
    await ownFile({ file: clip, sha256: first.sha256 }, CLIP, project, media, 'scene 1', false);
    expect(ownChecksums.reads - afterCopy).toBe(1);

    // The original changed: a new checksum, read anew.
    appendFileSync(clip, Buffer.alloc(16));
    const changed = await ownFile({ file: clip }, CLIP, project, media, 'scene 1', false);
    expect(changed.sha256).toBe(sumOf(clip));
    expect(changed.sha256).not.toBe(first.sha256);
  });
});
