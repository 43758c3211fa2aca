import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { assertMedia } from '../media/probe.ts';
import { UnusableResult, type OutputStore, type OutputTarget, type ResultRecord, type SavedOutput, type TaskRef } from '../ports.ts';

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

/** Makes a rename durable: the directory entry, not only the file, must reach the disk. */
async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Files under `<data>/projects/<id>/media/`, named after their task so recovery can find them: each written
 * to a temporary file, synced, renamed into place; then `task-<id>.result.json` names them all with their
 * checksums. Downloads are checked by ffprobe before they count.
 */
export class LocalOutputStore implements OutputStore {
  constructor(private readonly dataDir: string) {}

  private dir(projectId: number): string {
    return join(this.dataDir, 'projects', String(projectId), 'media');
  }

  private recordPath(task: TaskRef): string {
    return join(this.dir(task.projectId), `task-${task.id}.result.json`);
  }

  private pathFor(target: OutputTarget): string {
    const suffix = target.index === 0 ? '' : `-${target.index}`;
    return join(this.dir(target.projectId), `task-${target.taskId}${suffix}.${extensionFor(target.contentType)}`);
  }

  /** Streams into a synced temporary file beside `path`; returns it with its checksum and size. */
  private async writeTemp(path: string, body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<{ temp: string; sha256: string; bytes: number }> {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const temp = `${path}.${randomBytes(4).toString('hex')}.part`;
    const hash = createHash('sha256');
    let bytes = 0;
    const file = await open(temp, 'w', 0o600);
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
    return { temp, sha256: hash.digest('hex'), bytes };
  }

  private async place(temp: string, path: string): Promise<void> {
    await rename(temp, path);
    await syncDir(dirname(path));
  }

  async save(target: OutputTarget, body: AsyncIterable<Uint8Array>): Promise<SavedOutput> {
    const path = this.pathFor(target);
    const { temp, sha256, bytes } = await this.writeTemp(path, body);
    try {
      if (bytes === 0) throw new Error('the provider sent an empty file');
      await assertMedia(temp, target.kind);
    } catch (err) {
      await rm(temp, { force: true });
      throw new UnusableResult((err as Error).message);
    }
    await this.place(temp, path);
    return { path, sha256, bytes, contentType: target.contentType };
  }

  async keep(target: OutputTarget, bytes: Uint8Array): Promise<SavedOutput> {
    const path = this.pathFor(target);
    const written = await this.writeTemp(path, [bytes]);
    await this.place(written.temp, path);
    try {
      if (written.bytes === 0) throw new Error('the provider sent an empty file');
      await assertMedia(path, target.kind);
    } catch (err) {
      throw new UnusableResult(`${(err as Error).message}; what the provider sent is kept at ${path}`);
    }
    return { path, sha256: written.sha256, bytes: written.bytes, contentType: target.contentType };
  }

  async record(task: TaskRef, result: ResultRecord): Promise<void> {
    const path = this.recordPath(task);
    const { temp } = await this.writeTemp(path, [Buffer.from(JSON.stringify(result))]);
    await this.place(temp, path);
  }

  private async readRecord(task: TaskRef): Promise<ResultRecord | null> {
    try {
      const record = JSON.parse(await readFile(this.recordPath(task), 'utf8')) as ResultRecord;
      return record.idempotencyKey === task.idempotencyKey && Array.isArray(record.outputs) && record.outputs.length > 0 ? record : null;
    } catch {
      return null;
    }
  }

  async find(task: TaskRef): Promise<ResultRecord | null> {
    const record = await this.readRecord(task);
    if (!record) return null;
    for (const output of record.outputs) {
      const actual = await sha256Of(output.path).catch(() => null);
      if (actual !== output.sha256) return null;
    }
    return record;
  }

  has(task: TaskRef): boolean {
    try {
      return (JSON.parse(readFileSync(this.recordPath(task), 'utf8')) as ResultRecord).idempotencyKey === task.idempotencyKey;
    } catch {
      return false;
    }
  }
}
