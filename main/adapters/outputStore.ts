import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { assertMedia } from '../media/probe.ts';
import type { OutputStore, OutputTarget, SavedOutput } from '../ports.ts';

const EXTENSIONS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'video/mp4': 'mp4',
  'audio/mpeg': 'mp3',
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
};

export function extensionFor(contentType: string | null): string {
  return EXTENSIONS[(contentType ?? '').split(';')[0]!.trim()] ?? 'bin';
}

/** Files under `<data>/projects/<id>/media/`, checksummed while they stream in, checked by ffprobe before they count. */
export class LocalOutputStore implements OutputStore {
  constructor(private readonly dataDir: string) {}

  async save(target: OutputTarget, body: AsyncIterable<Uint8Array>): Promise<SavedOutput> {
    const dir = join(this.dataDir, 'projects', String(target.projectId), 'media');
    await mkdir(dir, { recursive: true });
    const suffix = target.index === 0 ? '' : `-${target.index}`;
    const path = join(dir, `task-${target.taskId}${suffix}.${extensionFor(target.contentType)}`);
    const temp = `${path}.${randomBytes(4).toString('hex')}.part`;
    const hash = createHash('sha256');
    let bytes = 0;
    const file = await open(temp, 'w');
    try {
      for await (const chunk of body) {
        hash.update(chunk);
        bytes += chunk.byteLength;
        await file.write(chunk);
      }
      await file.sync();
    } catch (err) {
      await file.close();
      await rm(temp, { force: true });
      throw err;
    }
    await file.close();
    try {
      if (bytes === 0) throw new Error('the provider sent an empty file');
      await assertMedia(temp, target.kind);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
    await rename(temp, path);
    return { path, sha256: hash.digest('hex'), bytes };
  }
}
