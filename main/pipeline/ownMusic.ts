import type { Project } from '../domain/project.ts';
import type { Storyboard } from '../domain/storyboard.ts';
import { extensionOf, ownFile, ownResult, type OwnDeps, type OwnFileKind, type OwnFound } from './ownFiles.ts';

/** The largest music file taken in: an hour of high-quality stereo, far more than a short film's bed. */
const MAX_MUSIC_BYTES = 300 * 1024 * 1024;

export const MUSIC: OwnFileKind = {
  // A library result of kind speech is the studio's one kind of sound.
  task: 'speech',
  noun: 'music',
  maxBytes: MAX_MUSIC_BYTES,
  accept(found, file) {
    if (!found?.audio) return { refused: 'has no sound; give a music file (MP3, M4A, AAC, WAV, FLAC, OGG or Opus)' };
    return { ext: extensionOf(file) || 'm4a' };
  },
  copyExtensions: (file) => [extensionOf(file) || 'm4a'],
  detail: (found) => (found.durationSec ? `${found.durationSec.toFixed(1)} s, looped or cut to the film` : ''),
};

/** The kinds of music file the app may send, by their extension: known before the bytes arrive, so an upload is held to music's size. */
export const MUSIC_EXTENSIONS = ['mp3', 'm4a', 'aac', 'wav', 'flac', 'ogg', 'opus'];

export const isMusicName = (name: string) => MUSIC_EXTENSIONS.includes(extensionOf(name));

/** The same, in words for a person. */
export const MUSIC_WORDS = 'an MP3, M4A, AAC, WAV, FLAC, OGG or Opus file';

/**
 * The storyboard's music bed: a file checked whole and, with `copy`, copied into the project (its checksum filled in
 * on the storyboard), or a finished audio task. Refused in words (OwnMediaRefused) when it cannot be used.
 */
export async function ownMusic(project: Project, board: Storyboard, deps: OwnDeps, copy: boolean): Promise<{ music?: OwnFound; board: Storyboard }> {
  const music = board.music;
  if (!music) return { board };
  if ('task' in music) return { music: await ownResult({ task: music.task }, '', MUSIC, deps, 'music'), board };
  const { sha256, ref, words } = await ownFile(music, MUSIC, project, deps.media, 'music', copy);
  return { music: { ref, words }, board: sha256 === music.sha256 ? board : { ...board, music: { ...music, sha256 } } };
}
