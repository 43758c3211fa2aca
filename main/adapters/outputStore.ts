import { createHash, randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { sha256File } from '../media/checksum.ts';
import { dataFolderMedia, inside, type MediaFolder } from '../media/mediaFolder.ts';
import { alternatePath, keepOwnName, placeWithoutReplacing } from '../media/placement.ts';
import { assertMedia, ProbeUnavailable } from '../media/probe.ts';
import { draftFileProblem } from '../media/draftFile.ts';
import { FolderGone, UnusableResult, type OutputStore, type OutputTarget, type ResultRecord, type SavedOutput, type TaskRef } from '../domain/ports.ts';

const EXTENSIONS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'video/mp4': 'mp4',
  'audio/mpeg': 'mp3',
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'application/json': 'json',
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
 * ffprobe, and only then put in place, never over another file (see placeWithoutReplacing; paid bytes that fail the
 * check keep a `.unusable` name).
 * `task-<id>-a<n>.result.json` names every file of a result with its checksum: written after the files for a
 * download (the provider still has it), before them for bytes in hand, so a crash while they are placed leaves
 * the record to find them, their synced temporary files included. Paid bytes that cannot be written there go to
 * `rescued/` beside `projects/`, with their record. A saved file's path is the one its row keeps (see MediaFolder).
 *
 * A folder that was moved or deleted while the studio runs is never made again at its old place for a download:
 * the provider still holds that result, and the studio started where the folder is now collects it (FolderGone).
 * Bytes in hand exist nowhere else, so they are written at their old place all the same, and named by that
 * absolute path, which a studio started anywhere finds them at; nothing is paid for twice, nothing is lost.
 */
export class LocalOutputStore implements OutputStore {
  private readonly media: MediaFolder;
  /** Bytes in hand staged by `stage`, by the path they go to, until `keep` places them. */
  private readonly staged = new Map<string, { temp: string; sha256: string; bytes: number }>();
  /** The folder files are saved in, as first seen (device and inode): one made again at its place is another. */
  private root: { dev: number; ino: number } | null = null;

  /** `media`: the media folder, or a data folder to keep files in as the studio always did. */
  constructor(media: MediaFolder | string) {
    this.media = typeof media === 'string' ? dataFolderMedia(media, hostname()) : media;
    this.rootHere();
  }

  /**
   * Whether the folder files are saved in is still the one the studio opened: a folder moved away and made again at
   * its old place (by anything that writes there with its parents) is not. A media folder not made yet is made by
   * the first save.
   */
  private rootHere(): boolean {
    const now = statSync(this.media.root, { throwIfNoEntry: false });
    if (!now) return this.root === null;
    this.root ??= { dev: now.dev, ino: now.ino };
    return now.dev === this.root.dev && now.ino === this.root.ino;
  }

  /** The path a row keeps for a file saved at `path`: absolute when the folder it belongs to is gone. */
  private stored(path: string): string {
    return this.rootHere() ? this.media.stored(path) : path;
  }

  private dir(projectId: number, rescue = false, base = this.media.base): string {
    return rescue ? join(base, 'rescued') : join(base, 'projects', String(projectId), 'media');
  }

  /**
   * Where a task's result record may be: this database's place (the record is written at the first two), then its
   * places under the spaces it had before it was copied, where a task it sent then has its result.
   */
  private recordPaths(task: TaskRef): string[] {
    const name = `task-${task.id}-${attemptTag(task.idempotencyKey)}.result.json`;
    return [this.media.base, ...this.media.earlierBases].flatMap((base) => [join(this.dir(task.projectId, false, base), name), join(this.dir(task.projectId, true, base), name)]);
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

  /** Renames `temp` to `path`, replacing what is there: for this attempt's own record only. */
  private async replace(temp: string, path: string): Promise<void> {
    await rename(temp, path);
    await syncDir(dirname(path));
  }

  /** Puts a result's file in place without replacing another file (see placeWithoutReplacing); returns where it is. */
  private async place(temp: string, path: string, sha256: string): Promise<string> {
    const placed = await placeWithoutReplacing(temp, path, sha256);
    await syncDir(dirname(placed));
    return placed;
  }

  /**
   * Why a written file is not the media asked for, or null. An ffprobe that cannot run now says nothing
   * about the file: the temporary file goes, and the error is thrown to be tried again.
   */
  private async problem(temp: string, bytes: number, target: OutputTarget): Promise<string | null> {
    if (bytes === 0) return 'the provider sent an empty file';
    if (target.kind === 'draft') return draftFileProblem(temp);
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
    if (!this.rootHere()) throw new FolderGone(`the folder results are saved in, ${this.media.root}, was moved or deleted while the studio runs`);
    const path = this.pathFor(target);
    const { temp, sha256, bytes } = await this.writeTemp(path, body);
    const problem = await this.problem(temp, bytes, target);
    if (problem) {
      await rm(temp, { force: true });
      throw new UnusableResult(problem);
    }
    return { path: this.stored(await this.place(temp, path, sha256)), sha256, bytes, contentType: target.contentType };
  }

  plan(target: OutputTarget, bytes: Uint8Array, rescue = false): SavedOutput {
    return {
      path: this.stored(this.pathFor(target, rescue)),
      sha256: createHash('sha256').update(bytes).digest('hex'),
      bytes: bytes.byteLength,
      contentType: target.contentType,
    };
  }

  async stage(target: OutputTarget, bytes: Uint8Array, rescue = false): Promise<void> {
    const path = this.pathFor(target, rescue);
    this.staged.set(path, await this.writeTemp(path, [bytes]));
  }

  async keep(target: OutputTarget, bytes: Uint8Array, rescue = false): Promise<SavedOutput> {
    const path = this.pathFor(target, rescue);
    const staged = this.staged.get(path);
    this.staged.delete(path);
    // A staged file gone since (its folder moved) is written again from the bytes in hand.
    const written = staged && existsSync(staged.temp) ? staged : await this.writeTemp(path, [bytes]);
    const problem = await this.problem(written.temp, written.bytes, target);
    const placed = await this.place(written.temp, problem ? `${path}.unusable` : path, written.sha256);
    if (problem) throw new UnusableResult(`${problem}; what the provider sent is kept at ${placed}`);
    return { path: this.stored(placed), sha256: written.sha256, bytes: written.bytes, contentType: target.contentType };
  }

  async record(task: TaskRef, result: ResultRecord, rescue = false): Promise<void> {
    const path = this.recordPaths(task)[rescue ? 1 : 0]!;
    const { temp } = await this.writeTemp(path, [Buffer.from(JSON.stringify(result))]);
    await this.replace(temp, path);
  }

  /**
   * The output as found whole at one of its places, its path as a row keeps it now; null when it is nowhere. A
   * record written with absolute paths in a data folder that moved since is found at its place in the layout here.
   * An output whose file is gone may still be whole in its synced temporary file: put in place if its checksum matches.
   */
  private async intact(output: SavedOutput): Promise<SavedOutput | null> {
    const places = this.media.places(output.path);
    const found = (path: string) => ({ ...output, path: this.stored(path) });
    for (const path of places.flatMap((p) => [p, alternatePath(p, output.sha256)])) if ((await sha256File(path).catch(() => null)) === output.sha256) return found(path);
    for (const path of places) {
      const dir = dirname(path);
      const prefix = `${basename(path)}.`;
      const temps = await readdir(dir).then(
        (names) => names.filter((n) => n.startsWith(prefix) && n.endsWith('.part')),
        () => [],
      );
      for (const name of temps) {
        if ((await sha256File(join(dir, name)).catch(() => null)) !== output.sha256) continue;
        return found(await this.place(join(dir, name), path, output.sha256));
      }
    }
    return null;
  }

  /**
   * An output found in a media space this database had before it was copied, given a name of its own in its space now:
   * the original may delete its name for the file, which the rows of both name.
   */
  private async ownName(output: SavedOutput): Promise<SavedOutput> {
    const at = this.media.resolve(output.path);
    const earlier = this.media.earlierBases.find((base) => inside(base, at) !== null);
    if (earlier === undefined) return output;
    const own = await keepOwnName(at, join(this.media.base, ...inside(earlier, at)!.split('/')), output.sha256);
    await syncDir(dirname(own));
    return { ...output, path: this.stored(own) };
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
      for (const output of record.outputs) {
        const whole = await this.intact(output);
        if (whole) outputs.push(await this.ownName(whole));
      }
      if (outputs.length > 0 && (!best || outputs.length > best.outputs.length)) best = { ...record, outputs, missing: record.outputs.length - outputs.length };
    }
    return best;
  }

  has(task: TaskRef): boolean {
    return this.recordPaths(task).some((path) => existsSync(path));
  }
}
