/** The StudioApi's calls on projects, their storyboards and their budgets. */

import { StoryboardError } from '../domain/storyboard.ts';
import { splitRevision, StaleStoryboard } from '../domain/storyboardRevision.ts';
import { parseStoryboard } from '../providers/storyboards.ts';
import { checkProjectName, MAX_BUDGET } from '../domain/project.ts';
import { toMicros } from '../domain/tasks/model.ts';
import { DraftService } from './draftService.ts';
import type { DraftEstimateView, DraftInput, DraftView } from './draftTypes.ts';
import { realAndSimulated } from './spendViews.ts';
import { ApiError, refusals } from './apiErrors.ts';
import type { ServiceContext } from './serviceContext.ts';
import { money } from './taskView.ts';
import type { ProjectSummary } from './contract.ts';

export async function listProjects(ctx: ServiceContext): Promise<ProjectSummary[]> {
  const [counts, days] = await Promise.all([ctx.studio.tasks.counts(), ctx.studio.tasks.spendByProvider()]);
  return (await ctx.studio.tasks.spend()).map((r) => ({
    id: r.projectId,
    name: r.project,
    currency: r.currency,
    budget: money(r.budget),
    ...realAndSimulated(days.filter((d) => d.project === r.project)),
    counts: Object.fromEntries(counts.filter((c) => c.projectId === r.projectId).map((c) => [c.status, c.n])),
  }));
}

export async function createProject(ctx: ServiceContext, name: string): Promise<ProjectSummary> {
  return refusals(async () => {
    const checked = checkProjectName(name);
    if (await ctx.studio.projects.byName(checked)) throw new ApiError(`there is already a project called "${checked}"`);
    const project = await ctx.studio.projects.ensure(name, ctx.studio.clock.now());
    return (await listProjects(ctx)).find((p) => p.id === project.id)!;
  });
}

export async function getStoryboard(ctx: ServiceContext, project: string): Promise<unknown | null> {
  const id = (await ctx.project(project)).id;
  try {
    // The revision first: read with a newer board, a save made from it is refused, never let through.
    const revision = await ctx.studio.storyboards.revision(id);
    const board = await ctx.studio.storyboards.get(id);
    return board ? { ...board, revision } : null;
  } catch (err) {
    // Stored JSON is always JSON (a CHECK on the table); what an older version saved may fail today's checks.
    if (!(err instanceof StoryboardError)) throw err;
    throw new ApiError(`the saved storyboard of "${project}" no longer passes the checks (${err.message}); start a new one to replace it`);
  }
}

export async function storyboardRevision(ctx: ServiceContext, project: string): Promise<number> {
  return ctx.studio.storyboards.revision((await ctx.project(project)).id);
}

export async function estimateDraft(ctx: ServiceContext, project: string, input: DraftInput): Promise<DraftEstimateView> {
  return refusals(async () => new DraftService(ctx.studio, ctx.deps.providers.get).estimate((await ctx.project(project)).name, input));
}

export async function draftStoryboard(ctx: ServiceContext, project: string, input: DraftInput): Promise<DraftView> {
  return refusals(async () => new DraftService(ctx.studio, ctx.deps.providers.get).draft((await ctx.project(project)).name, input));
}

export async function saveStoryboard(ctx: ServiceContext, project: string, storyboard: unknown): Promise<number> {
  return refusals(async () => {
    const id = (await ctx.project(project)).id;
    const { from, board } = splitRevision(storyboard);
    try {
      return await ctx.studio.storyboards.save(id, parseStoryboard(board), ctx.studio.clock.now(), from);
    } catch (err) {
      // Said with the project's name, as the person knows it.
      if (err instanceof StaleStoryboard) throw new StaleStoryboard(project, err.from, err.current);
      throw err;
    }
  });
}

export async function setBudget(ctx: ServiceContext, project: string, amount: number | null): Promise<void> {
  if (amount !== null && !(typeof amount === 'number' && Number.isFinite(amount) && amount >= 0 && amount <= MAX_BUDGET)) {
    throw new ApiError(`a budget is an amount from 0 to ${MAX_BUDGET}, or none`);
  }
  await ctx.studio.projects.setBudget((await ctx.project(project)).id, amount === null ? null : toMicros(amount));
}
