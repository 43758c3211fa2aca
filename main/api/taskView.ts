import { learnDurations, type LearnedDurations } from '../engine/durations.ts';
import { costBasis } from '../domain/costBasis.ts';
import { etaWords, stepEta, type StepEta } from '../engine/eta.ts';
import { renderEta } from '../engine/renderEta.ts';
import { fromMicros, type Task, type TaskEvent } from '../domain/tasks/model.ts';
import { isSimulated } from '../domain/simulated.ts';
import { taskCredits } from '../pricing/taskCredits.ts';
import { RENDER_PROVIDER } from '../pipeline/planner.ts';
import { etaView, pendingDependencies } from './scenePlan.ts';
import type { ServiceContext } from './serviceContext.ts';
import type { TaskEventView, TaskRefView, TaskView } from './contract.ts';

/** Estimates of when running tasks end, all judged at `now`. */
export interface Etas {
  now: number;
  of(t: Task): StepEta | null;
}

/** Models' learned durations for one call: each provider and model read once, by `load`, before `get`. */
export interface Durations {
  load(steps: Iterable<{ provider: string; model: string }>): Promise<void>;
  get(provider: string, model: string): LearnedDurations | null;
}

export const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
export const money = (micros: number | null) => fromMicros(micros);

export function summary(t: Task): string {
  const input = t.input as Record<string, unknown>;
  if (t.kind === 'render') return `render of ${(input.scenes as unknown[] | undefined)?.length ?? 0} scene(s)`;
  return String(input.prompt ?? input.text ?? input.idea ?? '').slice(0, 160);
}

export function ref(t: Task): TaskRefView {
  return { id: t.id, kind: t.kind, status: t.status, summary: summary(t) };
}

/** One line of a task's history, as the API shows it. */
export const eventView = (e: TaskEvent): TaskEventView => ({ at: iso(e.at)!, from: e.fromStatus, to: e.toStatus, actor: e.actor, reason: e.reason });

/**
 * This call's learned durations: each provider and model is read once, however many rows share it. A render
 * is made here, so its time counts from its claim; a provider's, from the provider's acceptance.
 */
export function durations(ctx: ServiceContext): Durations {
  const memo = new Map<string, LearnedDurations | null>();
  const key = (provider: string, model: string) => `${provider}\u0000${model}`;
  const tasks = ctx.studio.tasks;
  return {
    load: async (steps) => {
      for (const { provider, model } of steps) {
        if (memo.has(key(provider, model))) continue;
        const samples = provider === RENDER_PROVIDER ? await tasks.recentRenderDurations(provider, model) : await tasks.recentDurations(provider, model);
        memo.set(key(provider, model), learnDurations(samples));
      }
    },
    get: (provider, model) => memo.get(key(provider, model)) ?? null,
  };
}

/**
 * How far each running task of `tasks` is likely to be from done. Reads nothing for tasks not running; for
 * those that are, one read per model and one for when the running renders were claimed.
 */
export async function etas(ctx: ServiceContext, tasks: readonly Task[], learned = durations(ctx)): Promise<Etas> {
  const running = tasks.filter((t) => (t.status === 'SUBMITTED' && t.submittedAt !== null) || t.status === 'RUNNING');
  await learned.load(running);
  const renders = running.filter((t) => t.status === 'RUNNING' && t.provider === RENDER_PROVIDER).map((t) => t.id);
  const claimed = await ctx.studio.tasks.claimedAt(renders);
  const now = ctx.studio.clock.now();
  const of = (t: Task): StepEta | null => {
    if (t.status === 'SUBMITTED' && t.submittedAt !== null) return stepEta(learned.get(t.provider, t.model), now - t.submittedAt);
    if (t.status !== 'RUNNING') return null;
    if (t.provider !== RENDER_PROVIDER) return stepEta(learned.get(t.provider, t.model), 0); // still being sent
    const since = claimed.get(t.id);
    // Its own pace once it has one; before that, how long renders took here.
    return since === undefined ? null : (renderEta(t.progress, now - since) ?? stepEta(learned.get(t.provider, t.model), now - since));
  };
  return { now, of };
}

/**
 * `labels`: what the tasks of the current plan make, to name what a waiting task waits for. `eta`: a page's
 * estimates read together (see etas); by default, this one task's.
 */
export async function taskView(ctx: ServiceContext, t: Task, labels: ReadonlyMap<number, string> = new Map(), eta?: Etas): Promise<TaskView> {
  const estimates = eta ?? (await etas(ctx, [t]));
  const due = estimates.of(t);
  return {
    id: t.id,
    projectId: t.projectId,
    kind: t.kind,
    status: t.status,
    provider: t.provider,
    model: t.model,
    summary: summary(t),
    progress: t.progress,
    charged: t.charged,
    costEstimated: money(t.costEstimated),
    costEstimateSource: t.costEstimateSource,
    costActual: money(t.costActual),
    costActualSource: t.costActualSource,
    costBasis: costBasis(t),
    credits: taskCredits(t),
    currency: t.currency,
    simulated: isSimulated(t.provider),
    outputUrl: t.outputPath && t.status === 'SUCCEEDED' ? ctx.deps.mediaUrl(t.id) : null,
    error: t.error,
    unknownReason: t.unknownReason,
    note: t.note,
    waitingFor: await pendingDependencies(t, (id) => ctx.studio.tasks.get(id), labels),
    outputs: t.status === 'SUCCEEDED' ? (await ctx.studio.tasks.outputs(t.id)).length : 0,
    remoteRequestId: t.remoteRequestId,
    submitStartedAt: iso(t.submitStartedAt),
    createdAt: iso(t.createdAt)!,
    finishedAt: iso(t.finishedAt),
    eta: due && etaView(due, estimates.now, etaWords(due)),
  };
}
