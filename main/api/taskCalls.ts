/** The StudioApi's calls on a project's tasks: its page of them, the ones needing a decision, deciding, cancelling. */

import { moneyWords } from '../domain/money.ts';
import { mayStillRunUntil, resolveUnknown } from '../engine/decisions.ts';
import { LookupFailed, reconcile as reconcileTask } from '../engine/reconciler.ts';
import { cancelAsked, recordJournaledRequests } from '../studio.ts';
import { RENDER_PROVIDER } from '../pipeline/planner.ts';
import { planLabels } from './scenePlan.ts';
import { ApiError, refusals } from './apiErrors.ts';
import { currentPlan, named, type ServiceContext } from './serviceContext.ts';
import { etas, eventView, iso, money, ref, taskView } from './taskView.ts';
import type { CancelPreview, CandidateView, DecisionInput, TaskPage, TaskView, UnknownTask } from './contract.ts';

export async function listTasks(ctx: ServiceContext, project: string, offset: number, limit: number): Promise<TaskPage> {
  const safeOffset = Math.max(0, Math.floor(Number(offset) || 0));
  const p = await ctx.project(project);
  const page = await ctx.studio.tasks.page(p.id, safeOffset, Math.min(500, Math.max(1, Math.floor(Number(limit) || 50))));
  const labels = page.tasks.some((t) => t.status === 'PENDING') ? planLabels(await currentPlan(ctx, p)) : new Map<number, string>();
  const eta = await etas(ctx, page.tasks);
  const tasks: TaskView[] = [];
  for (const t of page.tasks) tasks.push(await taskView(ctx, t, labels, eta));
  return { total: page.total, offset: safeOffset, tasks };
}

export async function unknownTasks(ctx: ServiceContext): Promise<UnknownTask[]> {
  const names = new Map((await ctx.studio.projects.list()).map((p) => [p.id, p.name]));
  const unknown: UnknownTask[] = [];
  const now = ctx.studio.clock.now();
  for (const t of await ctx.studio.tasks.list({ status: 'OUTCOME_UNKNOWN' })) {
    const events = await ctx.studio.tasks.events(t.id);
    const provider = ctx.deps.providers.get(t.provider);
    // Judged as resolve judges a resubmit, so the time shown is the one a refusal would give.
    const running = await mayStillRunUntil(ctx.studio.tasks, t, now, { provider, queueMs: ctx.studio.settings.engine.lookup?.queueMs });
    const lookup = events.filter((e) => e.at >= (t.finishedAt ?? 0) && (e.detail as { lookup?: unknown } | null)?.lookup !== undefined).at(-1);
    unknown.push({
      ...(await taskView(ctx, t)),
      project: names.get(t.projectId)!,
      input: t.input,
      events: events.map(eventView),
      lookupLists: provider?.capabilities.lookup ? (provider.capabilities.lookupLists ?? null) : null,
      lookup: lookup?.reason ?? null,
      mayRunUntil: running && { at: iso(running.at)!, why: running.why },
    });
  }
  return unknown;
}

export async function reconcile(ctx: ServiceContext, taskId: number): Promise<CandidateView[]> {
  return refusals(async () => {
    await recordJournaledRequests(ctx.studio);
    const task = await ctx.studio.tasks.get(taskId);
    let found;
    try {
      found = await reconcileTask(ctx.studio.tasks, ctx.studio.files, task && ctx.deps.providers.get(task.provider), taskId, ctx.studio.clock.now(), ctx.studio.settings.engine.lookup?.queueMs);
    } catch (err) {
      if (err instanceof LookupFailed) throw new ApiError(`${err.message}; nothing was changed, try again later`);
      throw err;
    }
    const { candidates, listed, cut } = found;
    // An empty listing proves nothing yet: said as such, never as "never accepted", so nobody resubmits a running request.
    if (candidates.length === 0 && listed) throw new ApiError(`no request at ${task!.provider} matches yet, but it is not listed yet: ${listed.why}; look again after then`);
    if (candidates.length === 0 && cut) {
      throw new ApiError(`no request at ${task!.provider} matching it was among those read, but the listing could not be looked through whole: ${cut}; look for it in ${task!.provider}'s dashboard before deciding`);
    }
    return candidates.map((c) => ({ requestId: c.requestId, createdAt: iso(c.createdAt)!, status: c.status, why: c.why }));
  });
}

export async function resolve(ctx: ServiceContext, taskId: number, decision: DecisionInput): Promise<TaskView> {
  return refusals(async () => {
    await recordJournaledRequests(ctx.studio);
    const task = await ctx.studio.tasks.get(taskId);
    const check = { provider: task && ctx.deps.providers.get(task.provider), queueMs: ctx.studio.settings.engine.lookup?.queueMs, flag: 'choose to resubmit even if it is running' };
    return taskView(ctx, await resolveUnknown(ctx.studio.tasks, taskId, decision, ctx.studio.clock.now(), check));
  });
}

export async function cancel(ctx: ServiceContext, taskId: number): Promise<TaskView> {
  return refusals(async () => {
    const { task: cancelled } = await cancelAsked(ctx.studio, (p) => ctx.deps.providers.get(p), taskId);
    return taskView(ctx, cancelled);
  });
}

export async function cancelPreview(ctx: ServiceContext, taskId: number): Promise<CancelPreview> {
  const { task } = await named(ctx, taskId);
  const dependents = (await ctx.studio.tasks.pendingDependents(taskId)).map((t) => ref(t));
  const mayCost = task.costActual ?? task.costEstimated;
  const about = mayCost === null ? 'its price is unknown' : `about ${moneyWords(mayCost, task.currency)}`;
  const provider = ctx.deps.providers.get(task.provider);
  let message: string;
  const sent = task.submitStartedAt !== null && (task.status === 'RUNNING' || task.status === 'SUBMITTED');
  if (task.status !== 'PENDING' && task.status !== 'RUNNING' && task.status !== 'SUBMITTED') {
    message = `task ${taskId} is ${task.status.toLowerCase().replace('_', ' ')}; only unfinished work can be cancelled`;
  } else if (task.provider === RENDER_PROVIDER) {
    message = 'It is made on this machine; cancelling it costs nothing.';
  } else if (!sent) {
    message = `It has not been sent to ${task.provider}; nothing is charged for it.`;
  } else {
    const request = task.remoteRequestId ? ` as request ${task.remoteRequestId}` : '';
    // A request still being sent is asked to stop too, once the provider names it (see cancelLateRequest).
    const stop = provider?.cancel
      ? ` The studio asks ${task.provider} to stop it; if it is already running, it may still finish and be charged, and then its result is collected.`
      : ` The studio cannot ask ${task.provider} to stop it; what it makes is paid for, so its result is collected and kept.`;
    const where = task.status === 'RUNNING' && !task.remoteRequestId ? `It is being sent to ${task.provider}, so it may have been sent` : `It is already sent to ${task.provider}${request}`;
    message = `${where}; it may be charged (${about}).${stop}`;
  }
  return { taskId, sent, mayCost: money(mayCost), currency: task.currency, message, dependents };
}
