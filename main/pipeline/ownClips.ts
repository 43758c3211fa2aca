import type { Project } from '../domain/project.ts';
import { OWN_CLIP_UNDER_NARRATION_DB, ownClipCut, ownClipSceneLength } from '../domain/sceneLength.ts';
import type { Scene, Storyboard } from '../domain/storyboard.ts';
import { CLIP_TAIL_SEC } from '../media/wholeMedia.ts';
import { extensionOf, ownOfScenes, type OwnDeps, type OwnFileKind, type OwnFound } from './ownFiles.ts';
import { STILL, STILL_CODECS } from './ownImages.ts';

/** The largest clip taken in: past this it is no scene's shot but a film, and would fill the project's folder. */
const MAX_OWN_CLIP_BYTES = 1024 * 1024 * 1024;

export const CLIP: OwnFileKind = {
  task: 'clip',
  noun: 'clip',
  maxBytes: MAX_OWN_CLIP_BYTES,
  accept(found, file) {
    if (!found?.video || found.video.width === 0) return { refused: 'is not a video; give a clip (MP4, MOV, WebM) with a picture in it' };
    // ffprobe gives an animated PNG no length, so it would pass for a still: say what it is.
    if (found.video.codec === 'apng') return { refused: 'is an animated PNG, which the render cannot play as a clip; export it as a video (MP4, MOV, WebM) and give that' };
    if (STILL_CODECS.includes(found.video.codec) || !(found.durationSec && found.durationSec > 0)) {
      return { refused: 'is a still picture, not a clip; use it as the scene\'s "image" instead, or give a video' };
    }
    // The render reads any container ffmpeg does; the copy keeps the original's extension so a person knows it.
    return { ext: extensionOf(file) || 'mp4' };
  },
  copyExtensions: (file) => [extensionOf(file) || 'mp4'],
  // Decoding a clip of a gigabyte each estimate is too slow: its end tells whether it was cut short.
  tailSec: CLIP_TAIL_SEC,
  detail: (found) => `${found.durationSec!.toFixed(1)} s`,
};

/** What the render keeps of a scene's own clip, for the estimate: how long the scene lasts, what is cut, its sound. */
function lengthWords(scene: Scene, clip: Pick<OwnFound, 'seconds' | 'sound'>): string {
  if (clip.seconds === undefined) return '';
  const cut = ownClipCut(scene.duration, clip.seconds, scene.fit);
  const lasts = ownClipSceneLength(scene.duration, clip.seconds, null, scene.fit);
  const length = cut > 0
    ? `; its last ${cut.toFixed(1)} s cut to the scene's ${scene.duration} s (fit "scene"; remove it to keep all of the clip)`
    : lasts > scene.duration ? `; the scene lasts all ${lasts.toFixed(1)} s of it, not the ${scene.duration} s written` : '';
  const sound = clip.sound ? `; its sound kept${scene.narration ? `, ${-OWN_CLIP_UNDER_NARRATION_DB} dB lower under the narration` : ''}` : '';
  return `${length}${sound}`;
}

/** The containers a creator's clip usually comes in, by its file's extension: what the app may send as a clip. */
const CLIP_EXTENSIONS = ['mp4', 'mov', 'm4v', 'webm', 'mkv'];

/**
 * Whether a file the app sends is taken in as a clip or a still, by its name: known before its bytes arrive, so an
 * upload is held to that kind's size as it streams. Its content is checked all the same, and refused in words.
 */
export const ownKindByName = (name: string): OwnFileKind => (CLIP_EXTENSIONS.includes(extensionOf(name).toLowerCase()) ? CLIP : STILL);

/** Each scene's own clip, by scene id, and the storyboard with each file's checksum filled in (see ownFiles.ts). */
export async function ownClips(project: Project, board: Storyboard, deps: OwnDeps, copy: boolean): Promise<{ clips: Map<string, OwnFound>; board: Storyboard }> {
  const { found, board: filled } = await ownOfScenes(project, board, 'clip', CLIP, deps, copy);
  const scenes = new Map(board.scenes.map((s) => [s.id, s]));
  const clips = new Map([...found].map(([id, f]) => [id, { ...f, words: `${f.words}${lengthWords(scenes.get(id)!, f)}` }]));
  return { clips, board: filled };
}
