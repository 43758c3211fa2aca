import type { OwnMedia, Scene } from '../domain/storyboard.ts';

/** The creator's own still or clip a scene's storyboard names, as the takes show it: what it is and its name. */
export interface OwnInScene {
  kind: 'image' | 'clip';
  name: string;
}

/** A file by the name it was sent with, else its own (a path from any system); a task or a take by its number. */
function nameOf(media: OwnMedia): string {
  if ('file' in media) return media.name ?? media.file.split(/[\\/]/).pop()!;
  if ('task' in media) return `task ${media.task}`;
  return media.scene === undefined ? `take ${media.take}` : `take ${media.take} of scene ${media.scene}`;
}

/** The own still or clip the scene renders in place of a bought one, or null when it has neither. */
export function ownInScene(scene: Scene): OwnInScene | null {
  if (scene.clip) return { kind: 'clip', name: nameOf(scene.clip) };
  if (scene.image) return { kind: 'image', name: nameOf(scene.image) };
  return null;
}

/** "your own picture (mine.png)": how a person is told which of their files a scene uses. */
export const ownWords = (own: OwnInScene) => `your own ${own.kind === 'image' ? 'picture' : 'clip'} (${own.name})`;

/** The scene with its own still and clip taken out, so its bought steps go into the render again. */
export function withoutOwn(scene: Scene): Scene {
  const { image: _i, clip: _c, ...rest } = scene;
  return rest;
}
