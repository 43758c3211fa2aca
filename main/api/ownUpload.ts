import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { diskFullWords } from '../media/checkedCopy.ts';
import { partTail, sweepStaleParts } from '../media/staleParts.ts';
import type { Project } from '../domain/project.ts';
import { diskWasFull, OwnMediaRefused, ownFile, ownFolder, type OwnFileKind } from '../pipeline/ownFiles.ts';
import { ownKindByName } from '../pipeline/ownClips.ts';
import { isMusicName, MUSIC, MUSIC_WORDS } from '../pipeline/ownMusic.ts';
import type { Studio } from '../studio.ts';
import { ApiError } from './studioService.ts';

/** A picture or clip sent for a scene, checked and copied into the project: what the scene's `image` or `clip` is set to. */
export interface UploadedPicture {
  image?: { file: string; sha256: string; name: string };
  clip?: { file: string; sha256: string; name: string };
  /** The name the picture or clip was sent under. */
  name: string;
}

/** A music file sent for the storyboard's music bed, checked and copied into the project: what its `music` is set to. */
export interface UploadedMusic {
  music: { file: string; sha256: string; name: string };
  name: string;
}

/** A file larger than its kind may be (a still, a clip, music): refused as it streams, before the rest is read. */
export class UploadTooLarge extends ApiError {}

/** The disk filled while a file was received or copied: nothing of it was kept (HTTP 507). */
export class UploadDiskFull extends ApiError {}

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

/**
 * A picture sent from the app for a scene: streamed to a temporary file in the data folder (refused past the size
 * a still may be, as it streams), then checked and copied into the project like a file named in the storyboard.
 * The temporary file is always removed: an upload cut off, refused or failed leaves nothing behind, and only a
 * whole picture that passed its checks is copied, under its checksum. The storyboard is not changed here: the app
 * saves it with the scene's image set, carrying the revision it was made from.
 */
export async function receivePicture(studio: Studio, projectName: string, scene: string, name: string, body: AsyncIterable<Uint8Array>, announced: number | null): Promise<UploadedPicture> {
  const project = await projectNamed(studio, projectName);
  const board = await studio.storyboards.get(project.id);
  if (!board?.scenes.some((s) => s.id === scene)) {
    const have = board?.scenes.length ? `its scenes are ${board.scenes.map((s) => `"${s.id}"`).join(', ')}` : 'it has no saved storyboard';
    throw new ApiError(`there is no scene "${scene}" in the saved storyboard of "${projectName}" (${have}); save the storyboard with that scene first, then send the picture`);
  }
  const kind = ownKindByName(name);
  const copied = await receiveOwn(studio, project, kind, { where: `scene "${scene}"`, name, a: kind.task === 'clip' ? 'clip' : 'still', what: 'picture' }, body, announced);
  return { [kind.task]: { ...copied, name }, name };
}

/**
 * A music file sent from the app for the storyboard's music bed (its `music`), received, checked and copied into the
 * project as a picture is; the app then sets the storyboard's music to the copy and saves it.
 */
export async function receiveMusic(studio: Studio, projectName: string, name: string, body: AsyncIterable<Uint8Array>, announced: number | null): Promise<UploadedMusic> {
  const project = await projectNamed(studio, projectName);
  if (!isMusicName(name)) throw new ApiError(`music: ${name} is not a music file the studio takes; give ${MUSIC_WORDS}`);
  const copied = await receiveOwn(studio, project, MUSIC, { where: 'music', name, a: 'music file', what: 'music' }, body, announced);
  return { music: { ...copied, name }, name };
}

async function projectNamed(studio: Studio, projectName: string): Promise<Project> {
  const project = await studio.projects.byName(projectName);
  if (!project) throw new ApiError(`there is no project "${projectName}"`);
  return project;
}

/**
 * Streams a sent file to a temporary file in the data folder (refused past `kind`'s size as it streams), then checks
 * and copies it into the project under its checksum. The temporary file is always removed. `said` words the
 * refusals: where it was sent for, its name, what one of its kind is called ("a still") and what to send again.
 */
async function receiveOwn(
  studio: Studio,
  project: Project,
  kind: OwnFileKind,
  said: { where: string; name: string; a: string; what: string },
  body: AsyncIterable<Uint8Array>,
  announced: number | null,
): Promise<{ file: string; sha256: string }> {
  const { where, name } = said;
  const tooLarge = () => new UploadTooLarge(`${where}: ${name} is more than the ${megabytes(kind.maxBytes)} a ${said.a} may be; save it smaller`);
  if (announced !== null && announced > kind.maxBytes) throw tooLarge();
  const dir = join(studio.dataDir, 'uploads');
  await mkdir(dir, { recursive: true });
  await sweepUploads(studio);
  const part = join(dir, `upload-${partTail(randomBytes(8).toString('hex'))}`);
  let size = 0;
  try {
    await pipeline(
      body,
      async function* (chunks: AsyncIterable<Uint8Array>) {
        for await (const chunk of chunks) {
          size += chunk.length;
          if (size > kind.maxBytes) throw tooLarge();
          yield chunk;
        }
      },
      createWriteStream(part),
    );
    if (size === 0) throw new ApiError(`${where}: ${name} arrived empty; send the ${said.what} again`);
    const { ref, sha256 } = await ownFile({ file: part }, kind, project, studio.media, where, true, name);
    return { file: studio.media.resolve(ref.$file), sha256 };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOSPC') throw new UploadDiskFull(`${where}: ${diskFullWords(`${name}, received and then copied,`, Math.max(size, announced ?? 0) * 2)}`);
    if (diskWasFull(err)) throw new UploadDiskFull((err as Error).message);
    if (err instanceof OwnMediaRefused) throw new ApiError(err.message);
    throw err;
  } finally {
    await rm(part, { force: true });
  }
}

/** Removes the part files of uploads cut off by a kill of their host (at its start, and before each upload); never a live one's. */
export const sweepUploads = (studio: Pick<Studio, 'dataDir'>) => sweepStaleParts(join(studio.dataDir, 'uploads'), true);

/** Where a project's own still of this checksum is, for the app to show it; null when it has none. */
export async function ownPicturePath(studio: Studio, projectName: string, sha256: string): Promise<string | null> {
  const project = await studio.projects.byName(projectName);
  if (!project || !/^[0-9a-f]{64}$/.test(sha256)) return null;
  const dir = ownFolder(studio.media, project);
  const names = await readdir(dir).catch(() => [] as string[]);
  const found = names.find((n) => n.startsWith(`own-${sha256}.`) && !n.endsWith('.part'));
  return found ? join(dir, found) : null;
}
