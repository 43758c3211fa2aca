import type { Project } from '../domain/project.ts';
import type { Storyboard } from '../domain/storyboard.ts';
import { ownOfScenes, type OwnDeps, type OwnFileKind, type OwnFound } from './ownFiles.ts';

/** The largest still taken in: a still far past this is no picture a clip model takes, and would fill the project's folder. */
const MAX_OWN_IMAGE_BYTES = 50 * 1024 * 1024;

/** The still formats image-to-video models take, by ffprobe's codec name, and the extension the copy gets. */
const STILLS: Record<string, string> = { png: 'png', mjpeg: 'jpg', webp: 'webp' };

/** ffprobe's codec names of stills, which are no clip. */
export const STILL_CODECS = Object.keys(STILLS);

export const STILL: OwnFileKind = {
  task: 'image',
  noun: 'picture',
  maxBytes: MAX_OWN_IMAGE_BYTES,
  accept(found) {
    const ext = found?.video && found.video.width > 0 ? STILLS[found.video.codec] : undefined;
    return ext ? { ext } : { refused: 'is not a PNG, JPEG or WebP picture; give a still in one of those formats' };
  },
  copyExtensions: () => Object.values(STILLS),
};

/** Each scene's own still, by scene id, and the storyboard with each file's checksum filled in (see ownFiles.ts). */
export async function ownStills(project: Project, board: Storyboard, deps: OwnDeps, copy: boolean): Promise<{ stills: Map<string, OwnFound>; board: Storyboard }> {
  const { found, board: filled } = await ownOfScenes(project, board, 'image', STILL, deps, copy);
  return { stills: found, board: filled };
}
