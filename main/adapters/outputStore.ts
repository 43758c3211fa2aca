import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { sha256File } from '../media/checksum.ts';
import { dataFolderMedia, type MediaFolder } from '../media/mediaFolder.ts';
import { assertMedia, ProbeUnavailable } from '../media/probe.ts';
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

/** "a2" for attempt 2: names a result's files after the attempt that paid for them. */
function attemptTag(idempotencyKey: string | null): string {
  return `a${/-attempt-(\d+)$/.exec(idempotencyKey ?? '')?.[1] ?? '0'}`;
}

/**
 * Files under `projects/<id>/media/` in the media folder's place for this database (the data folder when no media
 * folder is set), named after their task and attempt, each written to a temporary file, synced, checked by
 * ffprobe, and only then renamed into place (paid bytes that fail the check keep a `.unusable` name).
 * `task-<id>-a<n>.result.json` names every file of a result with its checksum: written after the files for a
 * download (the provider still has it), before them for bytes in hand, so a crash while they are placed leaves
 * the record to find them, their synced temporary files included. Paid bytes that cannot be written there go to
 * `rescued/` beside `projects/`, with their record. A saved file's path is the one its row keeps (see MediaFolder).
 */
export class LocalOutputStore implements OutputStore {
  private readonly media: MediaFolder;

  /** `media`: the media folder, or a data folder to keep files in as the studio always did. */
  constructor(media: MediaFolder | string) {
    this.media = typeof media === 'string' ? dataFolderMedia(media, hostname()) : media;
  }

  private dir(projectId: number, rescue = false): string {
    return rescue ? join(this.media.base, 'rescued') : join(this.media.base, 'projects', String(projectId), 'media');
  }

  private recordPaths(task: TaskRef): string[] {
    const name = `task-${task.id}-${attemptTag(task.idempotencyKey)}.result.json`;
    return [join(this.dir(task.projectId), name), join(this.dir(task.projectId, true), name)];
  }

  private pathFor(target: OutputTarget, rescue = false): string {
    const suffix = target.index === 0 ? '' : `-${target.index}`;
    return join(this.dir(target.projectId, rescue), `task-${target.taskId}-${attemptTag(target.idempotencyKey)}${suffix}.${extensionFor(target.contentType)}`);
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

  /**
   * Why a written file is not the media asked for, or null. An ffprobe that cannot run now says nothing
   * about the file: the temporary file goes, and the error is thrown to be tried again.
   */
  private async problem(temp: string, bytes: number, target: OutputTarget): Promise<string | null> {
    if (bytes === 0) return 'the provider sent an empty file';
    try {
      await assertMedia(temp, target.kind);
      return null;
    } catch (err) {
      if (err instanceof ProbeUnavailable) {
        await rm(temp, { force: true });
        throw err;
      }
      return (err as Error).message;
    }
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
    return { path: this.media.stored(path), sha256, bytes, contentType: target.contentType };
  }

  plan(target: OutputTarget, bytes: Uint8Array, rescue = false): SavedOutput {
    return {
      path: this.media.stored(this.pathFor(target, rescue)),
      sha256: createHash('sha256').update(bytes).digest('hex'),
      bytes: bytes.byteLength,
      contentType: target.contentType,
    };
  }

  async keep(target: OutputTarget, bytes: Uint8Array, rescue = false): Promise<SavedOutput> {
    const path = this.pathFor(target, rescue);
    const written = await this.writeTemp(path, [bytes]);
    const problem = await this.problem(written.temp, written.bytes, target);
    await this.place(written.temp, problem ? `${path}.unusable` : path);
    if (problem) throw new UnusableResult(`${problem}; what the provider sent is kept at ${path}.unusable`);
    return { path: this.media.stored(path), sha256: written.sha256, bytes: written.bytes, contentType: target.contentType };
  }

  async record(task: TaskRef, result: ResultRecord, rescue = false): Promise<void> {
    const path = this.recordPaths(task)[rescue ? 1 : 0]!;
    const { temp } = await this.writeTemp(path, [Buffer.from(JSON.stringify(result))]);
    await this.place(temp, path);
  }

  /** An output whose file is gone may still be whole in its synced temporary file: put in place if its checksum matches. */
  private async intact(output: SavedOutput): Promise<boolean> {
    const path = this.media.resolve(output.path);
    if ((await sha256File(path).catch(() => null)) === output.sha256) return true;
    const dir = dirname(path);
    const prefix = `${basename(path)}.`;
    const temps = await readdir(dir).then(
      (names) => names.filter((n) => n.startsWith(prefix) && n.endsWith('.part')),
      () => [],
    );
    for (const name of temps) {
      if ((await sha256File(join(dir, name)).catch(() => null)) !== output.sha256) continue;
      await this.place(join(dir, name), path);
      return true;
    }
    return false;
  }

  async find(task: TaskRef): Promise<(ResultRecord & { missing: number }) | null> {
    let best: (ResultRecord & { missing: number }) | null = null;
    for (const path of this.recordPaths(task)) {
      let record: ResultRecord;
      try {
        record = JSON.parse(await readFile(path, 'utf8')) as ResultRecord;
      } catch {
        continue;
      }
      if (record.idempotencyKey !== task.idempotencyKey || !Array.isArray(record.outputs)) continue;
      const outputs: SavedOutput[] = [];
      for (const output of record.outputs) if (await this.intact(output)) outputs.push(output);
      if (outputs.length > 0 && (!best || outputs.length > best.outputs.length)) best = { ...record, outputs, missing: record.outputs.length - outputs.length };
    }
    return best;
  }

  has(task: TaskRef): boolean {
    return this.recordPaths(task).some((path) => existsSync(path));
  }
}
