/** The StudioApi's view of a storyboard as it is being made: its scene plan, and each scene's takes and the one picked. */

import { describeTakes, pickTake as pick, takeAsJson, type TakeSummary } from '../pipeline/takes.ts';
import { scenePlan as planView } from './scenePlan.ts';
import { ApiError, refusals } from './apiErrors.ts';
import { currentPlan, type ServiceContext } from './serviceContext.ts';
import { durations, etas, taskView } from './taskView.ts';
import type { ScenePlanView, TakeView } from './contract.ts';

export async function scenePlan(ctx: ServiceContext, project: string): Promise<ScenePlanView> {
  const p = await ctx.project(project);
  const decided = await currentPlan(ctx, p);
  const learned = durations(ctx);
  // Every model of the plan: a step not started yet is timed by its model's past durations too.
  await learned.load(decided?.map((d) => d.step) ?? []);
  const eta = await etas(ctx, decided?.flatMap((d) => (d.verdict.action === 'reuse' ? [d.verdict.task] : [])) ?? [], learned);
  return planView(decided, {
    projectId: p.id,
    withSameInput: (id, hash) => ctx.studio.tasks.withSameInput(id, hash),
    view: (t, labels) => taskView(ctx, t, labels, eta),
    eta: eta.of,
    learned: learned.get,
    now: eta.now,
  });
}

function takeView(ctx: ServiceContext, t: TakeSummary): TakeView {
  const made = (kind: TakeSummary['steps'][number]['kind']) => {
    const task = t.steps.find((s) => s.kind === kind)?.task;
    return task?.status === 'SUCCEEDED' && task.outputPath ? ctx.deps.mediaUrl(task.id) : null;
  };
  return {
    ...takeAsJson(t),
    imageUrl: made('image'),
    clipUrl: made('clip'),
  };
}

export async function takes(ctx: ServiceContext, project: string, scene?: string): Promise<TakeView[]> {
  if (scene !== undefined && (typeof scene !== 'string' || scene === '')) throw new ApiError('name the scene whose takes to list, or none for every scene');
  return (await describeTakes(ctx.studio, (await ctx.project(project)).id, scene)).map((t) => takeView(ctx, t));
}

export async function pickTake(ctx: ServiceContext, project: string, scene: string, take: number): Promise<TakeView> {
  if (typeof scene !== 'string' || scene === '') throw new ApiError('name the scene whose take to pick');
  if (!Number.isInteger(take) || take < 1) throw new ApiError(`a take is a whole number from 1, not ${JSON.stringify(take)}`);
  return refusals(async () => {
    const picked = await pick(ctx.studio, (await ctx.project(project)).name, scene, take);
    return { ...takeView(ctx, picked), replaced: picked.replaced };
  });
}
