import type { Project } from '../domain/project.ts';
import type { Storyboard } from '../domain/storyboard.ts';
import type { Studio } from '../studio.ts';
import { ownClips } from './ownClips.ts';
import type { OwnFound, OwnRef } from './ownFiles.ts';
import { ownStills } from './ownImages.ts';
import { ownMusic } from './ownMusic.ts';

/** What the creator brought for the storyboard: own stills and own clips, by scene id, and music. */
export interface OwnScenes {
  stills: ReadonlyMap<string, OwnFound>;
  clips: ReadonlyMap<string, OwnFound>;
  /** The storyboard's music bed, when it has one. */
  music?: OwnFound;
}

/** Each found one as the steps name it. */
export const refsOf = (found: ReadonlyMap<string, OwnFound>): Map<string, OwnRef> => new Map([...found].map(([scene, f]) => [scene, f.ref]));

/**
 * The scenes' own stills and clips, and the storyboard with each file's checksum filled in; with `copy`, each file
 * is copied into the project. OwnMediaRefused (see ownFiles.ts) names the scene and what to fix.
 */
export async function ownScenes(studio: Studio, project: Project, board: Storyboard, copy: boolean): Promise<OwnScenes & { board: Storyboard }> {
  const deps = {
    media: studio.media,
    task: (id: number) => studio.tasks.get(id),
    takes: (scene: string) => studio.takes.list(project.id, scene),
    projectId: project.id,
    projectName: async (id: number) => (await studio.projects.list()).find((p) => p.id === id)?.name,
  };
  const { stills, board: withStills } = await ownStills(project, board, deps, copy);
  const { clips, board: withClips } = await ownClips(project, withStills, deps, copy);
  const { music, board: filled } = await ownMusic(project, withClips, deps, copy);
  return { stills, clips, ...(music ? { music } : {}), board: filled };
}
