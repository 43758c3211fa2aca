import { basename, isAbsolute } from 'node:path';
import { OwnMediaRefused, ownFile } from '../pipeline/ownFiles.ts';
import { ownKindByName } from '../pipeline/ownClips.ts';
import { isMusicName, MUSIC, MUSIC_WORDS } from '../pipeline/ownMusic.ts';
import type { Studio } from '../studio.ts';
import type { UploadedMusic, UploadedPicture } from './ownUpload.ts';
import { ApiError } from './studioService.ts';

/**
 * A picture file on this computer, dropped or picked in the desktop app, for a scene: checked and copied into the
 * project exactly as an upload through the loopback host is (main/api/ownUpload.ts), without sending its bytes
 * anywhere. The desktop's preload finds the file's path (Electron's webUtils.getPathForFile), so the page never
 * sees or names one. The storyboard is not changed here: the app saves it with the scene's image set, carrying the
 * revision it was made from, as after an upload.
 */
export async function useOwnPicture(studio: Studio, projectName: string, scene: string, path: string): Promise<UploadedPicture> {
  const project = await studio.projects.byName(projectName);
  if (!project) throw new ApiError(`there is no project "${projectName}"`);
  const where = `scene "${scene}"`;
  // getPathForFile gives "" for a file that is not on disk (one dragged out of a web page, say).
  if (!path) throw new ApiError(`${where}: that picture is not a file on this computer; save it to a folder first, then drop or pick the saved file`);
  if (!isAbsolute(path)) throw new ApiError(`${where}: "${path.slice(0, 200)}" is not a full path to a picture on this computer; pick the file again`);
  const name = basename(path);
  try {
    const kind = ownKindByName(name);
    const { ref, sha256 } = await ownFile({ file: path }, kind, project, studio.media, where, true, name);
    return { [kind.task]: { file: studio.media.resolve(ref.$file), sha256, name }, name };
  } catch (err) {
    if (err instanceof OwnMediaRefused) throw new ApiError(err.message);
    throw err;
  }
}

/**
 * A music file on this computer, picked in the desktop app for the storyboard's music bed: checked and copied into the
 * project as an upload of music is (main/api/ownUpload.ts receiveMusic), found by its path as a picture is.
 */
export async function useOwnMusic(studio: Studio, projectName: string, path: string): Promise<UploadedMusic> {
  const project = await studio.projects.byName(projectName);
  if (!project) throw new ApiError(`there is no project "${projectName}"`);
  if (!path) throw new ApiError('music: that file is not on this computer; save it to a folder first, then pick the saved file');
  if (!isAbsolute(path)) throw new ApiError(`music: "${path.slice(0, 200)}" is not a full path to a file on this computer; pick the file again`);
  const name = basename(path);
  if (!isMusicName(name)) throw new ApiError(`music: ${name} is not a music file the studio takes; give ${MUSIC_WORDS}`);
  try {
    const { ref, sha256 } = await ownFile({ file: path }, MUSIC, project, studio.media, 'music', true, name);
    return { music: { file: studio.media.resolve(ref.$file), sha256, name }, name };
  } catch (err) {
    if (err instanceof OwnMediaRefused) throw new ApiError(err.message);
    throw err;
  }
}
