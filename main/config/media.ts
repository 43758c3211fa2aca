import { resolve } from 'node:path';
import { dataFolderMedia, isAbsoluteAnywhere, mediaFolderAt, type MediaFolder } from '../media/mediaFolder.ts';

/** Why `value` cannot name a media folder in settings, or null: its full path, as this machine mounts it. */
export function mediaDirProblem(value: unknown): string | null {
  if (typeof value !== 'string' || !value.trim()) return 'the media folder is its full path on this machine, like /mnt/studio-media';
  if (!isAbsoluteAnywhere(value)) return `"${value.slice(0, 200)}" is not a full path; give the media folder's full path on this machine, like /mnt/studio-media`;
  return null;
}

/**
 * The media folder set on this machine: --media, then STUDIO_MEDIA_DIR, then settings team.mediaDir; null when
 * none is, and the studio keeps its files in its data folder.
 */
export function chooseMediaDir(flag: string | undefined, env: NodeJS.ProcessEnv, team: { mediaDir?: string }): string | null {
  const chosen = flag || env.STUDIO_MEDIA_DIR || team.mediaDir;
  return chosen ? resolve(chosen) : null;
}

/**
 * Where a studio saves its files. With a media folder set, in the database's own folder within it (`space`); files
 * saved in the data folder before it was set are still found there. A team database with none set uses the data
 * folder as its media folder all the same, so its rows name files relative to it, as any machine of the team reads
 * them. The embedded database with none keeps its files in the data folder, relative to it.
 */
export function studioMedia(o: {
  dataDir: string;
  configured: string | null;
  kind: 'sqlite' | 'postgres';
  space: string;
  /** The spaces the database had before it was copied (Store.earlier). */
  earlierSpaces?: readonly string[];
  machine: string;
  /** Media folders this studio saved into before (see mediaFolders.ts), looked in too. */
  earlier?: readonly string[];
}): MediaFolder {
  const earlier = (o.earlier ?? []).filter((folder) => folder !== o.configured);
  if (o.configured) return mediaFolderAt(o.configured, o.space, o.machine, true, o.dataDir, earlier, o.earlierSpaces);
  if (o.kind === 'postgres') return mediaFolderAt(o.dataDir, o.space, o.machine, false, o.dataDir, earlier, o.earlierSpaces);
  return dataFolderMedia(o.dataDir, o.machine, earlier);
}
