import { copyFile, mkdir, rename, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Project } from '../domain/project.ts';
import type { OwnImage, Storyboard } from '../domain/storyboard.ts';
import type { Task } from '../domain/tasks/model.ts';
import { sha256File } from '../media/checksum.ts';
import { FileChecks } from '../media/fileChecks.ts';
import type { MediaFolder } from '../media/mediaFolder.ts';
import { probe } from '../media/probe.ts';

/** The largest still taken in: a still far past this is no picture a clip model takes, and would fill the project's folder. */
export const MAX_OWN_IMAGE_BYTES = 50 * 1024 * 1024;

/** The still formats image-to-video models take, by ffprobe's codec name, and the extension the copy gets. */
const STILLS: Record<string, string> = { png: 'png', mjpeg: 'jpg', webp: 'webp' };

/** A scene's own still as its clip names it: the project's copy (`$file`, with its checksum), or a library task's output. */
export type OwnImageRef = { $file: string; sha256: string; bytes: number } | { $output: number };

export interface OwnStill {
  ref: OwnImageRef;
  /** For the estimate: where the still comes from. */
  words: string;
}

/** A scene's own still cannot be used: the message names the scene and what to fix; nothing was saved or changed. */
export class OwnImageRefused extends Error {}

interface Deps {
  media: MediaFolder;
  task(id: number): Promise<Task | undefined>;
}

const copyName = (sha256: string, ext: string) => `own-${sha256}.${ext}`;

/**
 * Each scene's own still, by scene id, and the storyboard with each file's checksum filled in. With `copy`, a file is
 * copied into `projects/<id>/media/` once (named by its checksum); after that the copy is used, so the original may
 * move or go. Without it (an estimate), the file is only checked.
 */
export async function ownStills(project: Project, board: Storyboard, deps: Deps, copy: boolean): Promise<{ stills: Map<string, OwnStill>; board: Storyboard }> {
  const stills = new Map<string, OwnStill>();
  let changed = false;
  const scenes = [];
  for (const [i, scene] of board.scenes.entries()) {
    if (!scene.image) {
      scenes.push(scene);
      continue;
    }
    const where = `scene ${i + 1} ("${scene.id}") image`;
    if ('task' in scene.image) {
      stills.set(scene.id, await fromTask(scene.image.task, deps, where));
      scenes.push(scene);
      continue;
    }
    const { still, image } = await fromFile(scene.image, project, deps.media, where, copy);
    stills.set(scene.id, still);
    if (image.sha256 !== scene.image.sha256) changed = true;
    scenes.push({ ...scene, image });
  }
  return { stills, board: changed ? { ...board, scenes } : board };
}

async function fromTask(id: number, deps: Deps, where: string): Promise<OwnStill> {
  const task = await deps.task(id);
  if (!task) throw new OwnImageRefused(`${where}: there is no task ${id}; name a finished image task (see "studio tasks")`);
  if (task.kind !== 'image') throw new OwnImageRefused(`${where}: task ${id} made a ${task.kind}, not an image; name a finished image task`);
  if (task.status !== 'SUCCEEDED' || !task.outputPath) throw new OwnImageRefused(`${where}: task ${id} has no finished image (it is ${task.status}); name a finished image task`);
  return { ref: { $output: id }, words: `yours: the image of task ${id}` };
}

async function fromFile(image: Extract<OwnImage, { file: string }>, project: Project, media: MediaFolder, where: string, copy: boolean) {
  const dir = join(media.base, 'projects', String(project.id), 'media');
  // Copied before: the copy is the still, whether or not the original is still where it was.
  for (const ext of image.sha256 ? Object.values(STILLS) : []) {
    const path = join(dir, copyName(image.sha256!, ext));
    const info = await stat(path).catch(() => null);
    if (info && (await new FileChecks().state(path, { sha256: image.sha256!, bytes: info.size }, true)) === 'here') {
      return { still: { ref: { $file: media.stored(path), sha256: image.sha256!, bytes: info.size }, words: `yours: ${basename(image.file)}` }, image };
    }
  }
  const info = await stat(image.file).catch(() => null);
  if (!info || !info.isFile()) throw new OwnImageRefused(`${where}: there is no file at ${image.file}; put the picture there or change the path`);
  if (info.size > MAX_OWN_IMAGE_BYTES) {
    throw new OwnImageRefused(`${where}: ${image.file} is ${(info.size / 1024 / 1024).toFixed(0)} MB, more than the ${MAX_OWN_IMAGE_BYTES / 1024 / 1024} MB a still may be; save it smaller`);
  }
  const found = await probe(image.file).catch(() => null);
  const ext = found?.video ? STILLS[found.video.codec] : undefined;
  if (!found?.video || found.video.width === 0 || ext === undefined) {
    throw new OwnImageRefused(`${where}: ${image.file} is not a PNG, JPEG or WebP picture; give a still in one of those formats`);
  }
  const sha256 = await sha256File(image.file);
  const path = join(dir, copyName(sha256, ext));
  if (copy) {
    await mkdir(dir, { recursive: true });
    // Copied beside its place and renamed, so a half-copied file never bears the checksum's name.
    const part = `${path}.${process.pid}.part`;
    await copyFile(image.file, part);
    await rename(part, path);
  }
  return { still: { ref: { $file: media.stored(path), sha256, bytes: info.size }, words: `yours: ${basename(image.file)}` }, image: { file: image.file, sha256 } };
}
