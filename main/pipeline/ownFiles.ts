import { mkdir, stat } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import type { Project } from '../domain/project.ts';
import type { OwnMedia, Storyboard } from '../domain/storyboard.ts';
import type { TakeRecord } from '../domain/takeRecord.ts';
import type { Task } from '../domain/tasks/model.ts';
import { ChangedWhileCopied, copyChecked, DiskFull } from '../media/checkedCopy.ts';
import { ChecksumCache } from '../media/checksumCache.ts';
import type { MediaFolder } from '../media/mediaFolder.ts';
import { SHARE_ADVICE } from '../media/outputWords.ts';
import { probe, type ProbeResult } from '../media/probe.ts';
import { decodeFault } from '../media/wholeMedia.ts';
import { hasOutput } from './takes.ts';

/** A scene's own still or clip as a step names it: the project's copy (`$file`, with its checksum), or a task's output. */
export type OwnRef = FileRef | { $output: number };
/** The project's copy of a file the creator brought: its stored path (relative to the media folder) and checksum. */
export type FileRef = { $file: string; sha256: string; bytes: number };

export interface OwnFound {
  ref: OwnRef;
  /** For the estimate: where the still or clip comes from. */
  words: string;
  /** A file's picture size, as probed: a clip model's limits are checked against it (see frameSizes.ts). */
  size?: { width: number; height: number };
  /** A file's length and whether it has sound, as probed: a clip's scene lasts its length and keeps its sound (see ownClips.ts). */
  seconds?: number;
  sound?: boolean;
}

/** A scene's own still or clip cannot be used: the message names the scene and what to fix; nothing was saved or changed. */
export class OwnMediaRefused extends Error {}

/** A scene's own still or clip could not be copied because the disk is full (see checkedCopy.ts). */
export const diskWasFull = (err: unknown) => err instanceof OwnMediaRefused && err.cause instanceof DiskFull;

/** What a file must be to be taken in as a still or a clip. */
export interface OwnFileKind {
  /** The task kind a library result must be of. */
  task: 'image' | 'clip' | 'speech';
  noun: string;
  maxBytes: number;
  /** The extension the copy gets, or a refusal in words (what the file is not, and what to give instead). */
  accept(found: ProbeResult | null, file: string): { ext: string } | { refused: string };
  /** The names a copy made before may have, by the file's name (a still is named by its format, found only by probing). */
  copyExtensions(file: string): string[];
  /** Decode only this many of the file's last seconds (a clip), not all of it (a still). */
  tailSec?: number;
  /** Said after the file's name in the estimate ("3.0 s"). */
  detail?(found: ProbeResult): string;
}

export interface OwnDeps {
  media: MediaFolder;
  task(id: number): Promise<Task | undefined>;
  /** The takes of a scene of the project. */
  takes(scene: string): Promise<TakeRecord[]>;
  /** The project the scenes are of, and the name of another project (a library result may be any project's). */
  projectId?: number;
  projectName?(id: number): Promise<string | undefined>;
}

const copyName = (sha256: string, ext: string) => `own-${sha256}.${ext}`;

/** The checksums of the creator's files and their copies, kept while the studio runs (see checksumCache.ts). */
export const ownChecksums = new ChecksumCache();
const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

/** The folder a project's own files are copied into. */
export const ownFolder = (media: Pick<MediaFolder, 'base'>, project: Pick<Project, 'id'>) => join(media.base, 'projects', String(project.id), 'media');

/** A file's own extension, lower case, when it is a plain one. */
export const extensionOf = (file: string) => {
  const ext = extname(file).slice(1).toLowerCase();
  return /^[a-z0-9]{2,4}$/.test(ext) ? ext : '';
};

/** Whole stills and clip ends already decoded cleanly, by checksum: a version of a file is decoded once while the studio runs. */
const decodedWhole = new Set<string>();

/**
 * A file the creator brought, checked with ffprobe and decoded (a still whole, a clip's last seconds: ffprobe reads
 * only the header, so a file cut short passes it) and, with `copy`, copied into `projects/<id>/media/` once (named by
 * its checksum). After that the copy is used while the original is gone; an original written since (its checksum
 * differs) is checked and copied anew, and the estimate says so. Without `copy` (an estimate), it is only checked.
 * `shownAs` is the name the person knows it by (an upload's own name), else the file's path.
 */
export async function ownFile(
  own: { file: string; sha256?: string; name?: string },
  kind: OwnFileKind,
  project: Pick<Project, 'id'>,
  media: MediaFolder,
  where: string,
  copy: boolean,
  shownAs?: string,
): Promise<{ ref: FileRef; words: string; sha256: string; found: ProbeResult | null }> {
  const named = shownAs ?? own.file;
  const words = `yours: ${shownAs ?? own.name ?? basename(own.file)}`;
  const dir = ownFolder(media, project);
  const info = await stat(own.file).catch(() => null);
  const original = info?.isFile() ? info : null;
  // The original as it is now decides; its copy stands in only when it is gone. In a team the copy is in the shared
  // media folder, where every machine finds it by its checksum (the original's path is one machine's).
  const current = original && own.sha256 ? await ownChecksums.of(own.file).catch(() => null) : null;
  const copies = own.sha256 ? kind.copyExtensions(own.file).map((ext) => copyName(own.sha256!, ext)) : [];
  // An original that cannot be read now (its permissions) is no newer version: the copy stands in for it too.
  if (own.sha256 && (!original || current === null || current === own.sha256)) {
    for (const path of [dir, ...media.earlierBases.map((base) => ownFolder({ base }, project))].flatMap((d) => copies.map((c) => join(d, c)))) {
      const kept = await stat(path).catch(() => null);
      if (kept?.isFile() && (await ownChecksums.of(path).catch(() => null)) === own.sha256) {
        const gone = original ? '' : ` (the original is gone from ${own.file}; the project's copy is used)`;
        return { ref: { $file: media.stored(path), sha256: own.sha256, bytes: kept.size }, words: `${words}${gone}`, sha256: own.sha256, found: await probe(path).catch(() => null) };
      }
    }
  }
  if (!original && own.sha256) {
    throw new OwnMediaRefused(
      `${where}: the project's copy of ${named} (${copies[0]}) is not in this machine's media folder ${media.root}, and there is no file at ${own.file}: ` +
        `${SHARE_ADVICE}, as on the machine that copied it, or put the ${kind.noun} back at that path`,
    );
  }
  if (!original) throw new OwnMediaRefused(`${where}: there is no file at ${own.file}; put the ${kind.noun} there or change the path`);
  if (original.size > kind.maxBytes) {
    throw new OwnMediaRefused(`${where}: ${named} is ${megabytes(original.size)}, more than the ${megabytes(kind.maxBytes)} a ${kind.task === 'image' ? 'still' : kind.noun} may be; save it smaller`);
  }
  const found = await probe(own.file).catch(() => null);
  // By the name it was sent under: an upload's part file has none of its own.
  const accepted = kind.accept(found, named);
  if ('refused' in accepted) throw new OwnMediaRefused(`${where}: ${named} ${accepted.refused}`);
  const sha256 = await ownChecksums.of(own.file);
  if (!decodedWhole.has(`${kind.task}:${sha256}`)) {
    const fault = await decodeFault(own.file, kind.tailSec);
    if (fault) {
      throw new OwnMediaRefused(`${where}: ${named} is damaged or cut short (ffmpeg could not read it to its end: ${fault}); save or export it again whole, then try again`);
    }
    decodedWhole.add(`${kind.task}:${sha256}`);
  }
  const path = join(dir, copyName(sha256, accepted.ext));
  if (copy) {
    await mkdir(dir, { recursive: true });
    try {
      await copyChecked(own.file, path, sha256, original.size, named);
    } catch (err) {
      if (err instanceof DiskFull || err instanceof ChangedWhileCopied) throw new OwnMediaRefused(`${where}: ${err.message}`, { cause: err });
      throw err;
    }
  }
  const detail = kind.detail ? `, ${kind.detail(found!)}` : '';
  const changed = own.sha256 && own.sha256 !== sha256 ? ` (changed since it was copied: the new version is used${kind.task === 'image' ? ' and the clip is made again' : ''})` : '';
  return { ref: { $file: media.stored(path), sha256, bytes: original.size }, words: `${words}${detail}${changed}`, sha256, found };
}

/** A finished task of the studio, or what a take made, as a scene's own still or clip; refused when its file is gone. */
export async function ownResult(own: Exclude<OwnMedia, { file: string }>, scene: string, kind: OwnFileKind, deps: OwnDeps, where: string): Promise<OwnFound> {
  if ('task' in own) {
    const task = await finished(own.task, kind, deps, where);
    // The library lists every project's results and "Use in scene…" may take any of them: allowed, and said.
    const other = deps.projectId !== undefined && task.projectId !== deps.projectId ? await deps.projectName?.(task.projectId) : undefined;
    return { ref: { $output: own.task }, words: `yours: the ${kind.task} of task ${own.task}${other ? ` (of project "${other}")` : ''}` };
  }
  const of = own.scene ?? scene;
  const takes = await deps.takes(of);
  const take = takes.find((t) => t.take === own.take);
  if (!take) {
    const have = takes.length === 0 ? `scene "${of}" has no takes yet` : `the takes of scene "${of}" are ${takes.map((t) => t.take).join(', ')}`;
    throw new OwnMediaRefused(`${where}: there is no take ${own.take} of scene "${of}" (${have}); name one of those, or remove "${kind.task}"`);
  }
  const id = kind.task === 'image' ? take.imageTaskId : take.clipTaskId;
  await finished(id, kind, deps, `${where} (take ${own.take} of scene "${of}")`);
  return { ref: { $output: id }, words: `yours: the ${kind.task} of take ${own.take}${own.scene ? ` of scene "${of}"` : ''} (task ${id})` };
}

async function finished(id: number, kind: OwnFileKind, deps: OwnDeps, where: string): Promise<Task> {
  const a = kind.task === 'image' ? 'an' : 'a';
  const name = `a finished ${kind.task} task`;
  const task = await deps.task(id);
  if (!task) throw new OwnMediaRefused(`${where}: there is no task ${id}; name ${name}`);
  if (task.kind !== kind.task) throw new OwnMediaRefused(`${where}: task ${id} made a ${task.kind}, not ${a} ${kind.task}; name ${name}`);
  if (task.status !== 'SUCCEEDED' || !task.outputPath) throw new OwnMediaRefused(`${where}: task ${id} has no finished ${kind.task} (it is ${task.status}); name ${name}`);
  if (!hasOutput(deps.media)(task)) {
    throw new OwnMediaRefused(`${where}: the ${kind.task} of task ${id} is gone from this machine (its file is not in the media folder); bring the file back, or use another take or your own file`);
  }
  return task;
}

/**
 * Each scene's own still (`field` "image") or clip, by scene id, and the storyboard with each file's checksum filled
 * in. With `copy`, a file is copied into the project; without it (an estimate), it is only checked.
 */
export async function ownOfScenes(
  project: Pick<Project, 'id'>,
  board: Storyboard,
  field: 'image' | 'clip',
  kind: OwnFileKind,
  deps: OwnDeps,
  copy: boolean,
): Promise<{ found: Map<string, OwnFound>; board: Storyboard }> {
  const found = new Map<string, OwnFound>();
  let changed = false;
  const scenes = [];
  for (const [i, scene] of board.scenes.entries()) {
    const own = scene[field];
    if (!own) {
      scenes.push(scene);
      continue;
    }
    const where = `scene ${i + 1} ("${scene.id}") ${field}`;
    if (!('file' in own)) {
      found.set(scene.id, await ownResult(own, scene.id, kind, deps, where));
      scenes.push(scene);
      continue;
    }
    const { sha256, found: probed, ...one } = await ownFile(own, kind, project, deps.media, where, copy);
    found.set(scene.id, probed?.video ? { ...one, size: { width: probed.video.width, height: probed.video.height }, ...(probed.durationSec ? { seconds: probed.durationSec } : {}), sound: probed.audio !== null } : one);
    if (sha256 !== own.sha256) changed = true;
    scenes.push({ ...scene, [field]: { ...own, sha256 } });
  }
  return { found, board: changed ? { ...board, scenes } : board };
}
