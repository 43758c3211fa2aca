import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, existsSync, readdirSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
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

function contentTypeFor(extension: string): string | null {
  return Object.entries(EXTENSIONS).find(([, ext]) => ext === extension)?.[0] ?? null;
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

/** "a2" for attempt 2: names a result's files after the attempt that paid for them. */
function attemptTag(idempotencyKey: string | null): string {
  return `a${/-attempt-(\d+)$/.exec(idempotencyKey ?? '')?.[1] ?? '0'}`;
}

/** A file placed whole and checked: `task-<id>-a<n>.<ext>` or `task-<id>-a<n>-<index>.<ext>`. */
const PLACED = /^task-(\d+)-(a\d+)(?:-(\d+))?\.(\w+)$/;

/**
 * Files under `<data>/projects/<id>/media/`, named after their task and attempt so recovery can find them:
 * each written to a temporary file, synced, checked by ffprobe, and only then renamed into place (a file
 * that fails the check keeps a `.unusable` name); then `task-<id>-a<n>.result.json` names them all with
 * their checksums. Paid bytes that cannot be written there go to `<data>/rescued/`.
 */
export class LocalOutputStore implements OutputStore {
  constructor(private readonly dataDir: string) {}

  private dir(projectId: number): string {
    return join(this.dataDir, 'projects', String(projectId), 'media');
  }

  private rescueDir(): string {
    return join(this.dataDir, 'rescued');
  }

  private recordPath(task: TaskRef, dir = this.dir(task.projectId)): string {
    return join(dir, `task-${task.id}-${attemptTag(task.idempotencyKey)}.result.json`);
  }

  private pathFor(target: OutputTarget, dir = this.dir(target.projectId)): string {
    const suffix = target.index === 0 ? '' : `-${target.index}`;
    return join(dir, `task-${target.taskId}-${attemptTag(target.idempotencyKey)}${suffix}.${extensionFor(target.contentType)}`);
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

  /** Why a written file is not the media asked for, or null. */
  private async problem(temp: string, bytes: number, target: OutputTarget): Promise<string | null> {
    if (bytes === 0) return 'the provider sent an empty file';
    return assertMedia(temp, target.kind).then(
      () => null,
      (err: Error) => err.message,
    );
  }

  async save(target: OutputTarget, body: AsyncIterable<Uint8Array>): Promise<SavedOutput> {
    const path = this.pathFor(target);
    const { temp, sha256, bytes } = await this.writeTemp(path, body);
    const problem = await this.problem(temp, bytes, target);
    if (problem) {
      await rm(temp, { force: true });
      throw new UnusableResult(problem);
    }
    await this.place(temp, path);
    return { path, sha256, bytes, contentType: target.contentType };
  }

  async keep(target: OutputTarget, bytes: Uint8Array, rescue = false): Promise<SavedOutput> {
    const path = this.pathFor(target, rescue ? this.rescueDir() : undefined);
    const written = await this.writeTemp(path, [bytes]);
    const problem = await this.problem(written.temp, written.bytes, target);
    await this.place(written.temp, problem ? `${path}.unusable` : path);
    if (problem) throw new UnusableResult(`${problem}; what the provider sent is kept at ${path}.unusable`);
    return { path, sha256: written.sha256, bytes: written.bytes, contentType: target.contentType };
  }

  /** Beside the files in the project's folder, else in the rescue place, like the bytes it names. */
  async record(task: TaskRef, result: ResultRecord): Promise<void> {
    const write = async (path: string) => {
      const { temp } = await this.writeTemp(path, [Buffer.from(JSON.stringify(result))]);
      await this.place(temp, path);
    };
    await write(this.recordPath(task)).catch((err) => write(this.recordPath(task, this.rescueDir())).catch(() => Promise.reject(err)));
  }

  private async readRecord(task: TaskRef): Promise<ResultRecord | null> {
    for (const path of [this.recordPath(task), this.recordPath(task, this.rescueDir())]) {
      try {
        const record = JSON.parse(await readFile(path, 'utf8')) as ResultRecord;
        if (record.idempotencyKey === task.idempotencyKey && Array.isArray(record.outputs) && record.outputs.length > 0) return record;
      } catch {
        // None here; the other place, or none at all.
      }
    }
    return null;
  }

  /** The attempt's placed files, in the project's folder and the rescue place, in output order. */
  private placed(task: TaskRef): { path: string; index: number; ext: string }[] {
    const tag = attemptTag(task.idempotencyKey);
    return [this.dir(task.projectId), this.rescueDir()].flatMap((dir) => {
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        return [];
      }
      return names.flatMap((name) => {
        const m = PLACED.exec(name);
        return m && Number(m[1]) === task.id && m[2] === tag ? [{ path: join(dir, name), index: Number(m[3] ?? 0), ext: m[4]! }] : [];
      });
    }).sort((a, b) => a.index - b.index);
  }

  async find(task: TaskRef): Promise<(ResultRecord & { whole: boolean }) | null> {
    const record = await this.readRecord(task);
    if (record) {
      const intact = await Promise.all(record.outputs.map(async (o) => (await sha256Of(o.path).catch(() => null)) === o.sha256));
      if (intact.every(Boolean)) return { ...record, whole: true };
    }
    const files = this.placed(task);
    if (files.length === 0) return null;
    const outputs = await Promise.all(
      files.map(async (f) => ({ path: f.path, sha256: await sha256Of(f.path), bytes: (await stat(f.path)).size, contentType: contentTypeFor(f.ext) })),
    );
    return { idempotencyKey: task.idempotencyKey, requestId: record?.requestId ?? null, costActual: record?.costActual ?? null, outputs, whole: false };
  }

  has(task: TaskRef): boolean {
    return existsSync(this.recordPath(task)) || existsSync(this.recordPath(task, this.rescueDir())) || this.placed(task).length > 0;
  }
}
