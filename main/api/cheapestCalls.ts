/** The StudioApi's move of a scene, or the whole storyboard, to the provider that makes the same model for less. */

import { moveToCheapest as move } from '../pipeline/cheapest.ts';
import { ApiError, refusals } from './apiErrors.ts';
import type { ServiceContext } from './serviceContext.ts';
import { money } from './taskView.ts';
import type { CheapestView } from './contract.ts';

export async function moveToCheapest(ctx: ServiceContext, project: string, change: { scene?: string; revision: number }): Promise<CheapestView> {
  const { scene, revision } = change ?? ({} as { scene?: string; revision: number });
  if (!Number.isSafeInteger(revision) || revision < 0) throw new ApiError('give the revision of the storyboard the estimate was of (getStoryboard gives it), so a storyboard saved since is not overwritten');
  if (scene !== undefined && (typeof scene !== 'string' || scene === '')) throw new ApiError('name the scene to move, or none for the whole storyboard');
  return refusals(async () => {
    const deps = { studio: ctx.studio, provider: ctx.deps.providers.get, defaults: ctx.studio.settings.defaults, prices: () => ctx.studio.settings.prices };
    const done = await move(deps, project, scene ?? null, revision);
    const total = { ...done.total, before: money(done.total.before)!, after: money(done.total.after)! };
    return { revision: done.revision, moves: done.moves.map((m) => ({ ...m, before: money(m.before)!, after: money(m.after)! })), total };
  });
}
