import type { LearnedDurations } from '../engine/durations.ts';
import { criticalPath, stepEta, videoEtaWords, type PathStep, type StepEta, type VideoEta } from '../engine/eta.ts';
import { outputRefs } from '../engine/outputRefs.ts';
import { bindStepRefs, type PlannedStep } from '../pipeline/planner.ts';
import type { Decided, Verdict } from '../pipeline/reuse.ts';
import { inputHash } from '../domain/tasks/inputHash.ts';
import { fromMicros, type Kind, type Task } from '../domain/tasks/model.ts';
import type { EtaView, PlanStepView, ScenePlanView, StepState, TaskView } from './contract.ts';

const WORDS: Record<Kind, string> = { image: 'image', clip: 'clip', speech: 'narration', render: 'the finished video', draft: 'the storyboard draft' };

/** What a step makes, as a creator says it: "image of dawn", "narration of dusk". */
export function stepLabel(step: Pick<PlannedStep, 'kind' | 'scene'>): string {
  return step.scene === null ? WORDS[step.kind] : `${WORDS[step.kind]} of ${step.scene}`;
}

/** Each task of the current plan by what it makes, so a task waiting on it can say "waiting for: image of dawn". */
export function planLabels(decided: readonly Decided[] | null): Map<number, string> {
  const labels = new Map<number, string>();
  for (const { step, verdict } of decided ?? []) if (verdict.action === 'reuse') labels.set(verdict.task.id, stepLabel(step));
  return labels;
}

/** A task's dependencies that have not succeeded yet, named by the plan where it knows them. */
export async function pendingDependencies(task: Task, get: (id: number) => Promise<Task | undefined>, labels: ReadonlyMap<number, string>): Promise<string[]> {
  if (task.status !== 'PENDING') return [];
  const waiting: string[] = [];
  for (const id of new Set(outputRefs(task.input))) {
    const dep = await get(id);
    if (!dep || dep.status === 'SUCCEEDED') continue;
    const input = dep.input as Record<string, unknown>;
    const words = String(input.prompt ?? input.text ?? '').slice(0, 40);
    waiting.push(labels.get(id) ?? `${WORDS[dep.kind]} ${words ? `"${words}"` : `(task ${id})`}`);
  }
  return waiting;
}

const UNDER_WAY: Partial<Record<Task['status'], StepState>> = {
  SUCCEEDED: 'ready',
  OUTCOME_UNKNOWN: 'needs your decision',
  SUBMITTED: 'at the provider',
  RUNNING: 'sending',
  FAILED: 'failed',
  CANCELLED: 'cancelled',
};

export interface ScenePlanDeps {
  projectId: number;
  withSameInput(projectId: number, hash: string): Promise<Task[]>;
  view(task: Task, labels: ReadonlyMap<number, string>): Promise<TaskView>;
  /** A running task's estimate; null for one not running or with no history. */
  eta(task: Task): StepEta | null;
  /** A model's past durations here, for the steps not started yet. */
  learned(provider: string, model: string): LearnedDurations | null;
  now: number;
}

/** An estimate as the API gives it, with its words. */
export function etaView(eta: StepEta | VideoEta, now: number, text: string): EtaView {
  return { expectedAt: eta.late || eta.remainingMs === null ? null : new Date(now + eta.remainingMs).toISOString(), late: eta.late, text };
}

/**
 * When the finished video is likely to be ready: null when it is, or when a step waits on a person or a
 * Generate (failed, lost, not generated), or when a step left has a model with no history here.
 */
function videoReady(decided: readonly Decided[], views: readonly PlanStepView[], deps: ScenePlanDeps): EtaView | null {
  if (views.find((v) => v.kind === 'render')?.state === 'ready') return null;
  const steps: PathStep[] = [];
  for (const [i, { step, verdict }] of decided.entries()) {
    const state = views[i]!.state;
    let eta: StepEta | null;
    if (state === 'ready') eta = { remainingMs: 0, late: false };
    else if (state === 'waiting' || state === 'queued') eta = stepEta(deps.learned(step.provider, step.model), 0);
    else if ((state === 'sending' || state === 'at the provider') && verdict.action === 'reuse') eta = deps.eta(verdict.task);
    else return null;
    steps.push({ key: step.key, dependsOn: step.dependsOn, eta });
  }
  const path = criticalPath(steps);
  return path && etaView(path, deps.now, videoEtaWords(path));
}

/**
 * The current plan of a storyboard per scene: for each step, the task that stands for it now (the one a
 * Generate would reuse) and where it stands. A step a Generate would make anew shows the last failed or
 * cancelled attempt at the same input, if there is one, so what went wrong stays in view.
 */
export async function scenePlan(decided: readonly Decided[] | null, deps: ScenePlanDeps): Promise<ScenePlanView> {
  if (!decided) return { scenes: [], render: null, videoReady: null };
  const labels = planLabels(decided);
  const byKey = new Map(decided.map((d) => [d.step.key, d]));
  // The same binding a Generate makes (reuse.ts decidePlan), to find earlier attempts at a step's exact input.
  const ids = new Map<string, number>();
  const stepView = async (step: PlannedStep, verdict: Verdict): Promise<PlanStepView> => {
    const base = { key: step.key, kind: step.kind, scene: step.scene, label: stepLabel(step), provider: step.provider, model: step.model, waitingFor: [], lost: null };
    const bound = bindStepRefs(step.input, ids);
    if (verdict.action === 'reuse') {
      ids.set(step.key, verdict.task.id);
      const t = verdict.task;
      if (t.status === 'PENDING') {
        const waitingFor = step.dependsOn.filter((k) => {
          const dep = byKey.get(k)?.verdict;
          return !(dep?.action === 'reuse' && dep.task.status === 'SUCCEEDED');
        });
        return { ...base, state: waitingFor.length ? 'waiting' : 'queued', waitingFor: waitingFor.map((k) => stepLabel(byKey.get(k)!.step)), task: await deps.view(t, labels) };
      }
      return { ...base, state: UNDER_WAY[t.status] ?? 'ready', task: await deps.view(t, labels) };
    }
    if (verdict.action === 'rebuy') {
      ids.set(step.key, verdict.lost.id);
      const t = verdict.lost;
      return {
        ...base,
        state: 'paid, result lost',
        task: await deps.view(t, labels),
        lost: { taskId: t.id, paid: t.charged === 'yes' ? 'yes' : 'maybe', cost: fromMicros(t.costActual ?? t.costEstimated ?? 0)!, currency: t.currency, why: verdict.why, ...(verdict.savedOn === undefined ? {} : { savedOn: verdict.savedOn }), ...(verdict.looked === undefined ? {} : { looked: verdict.looked }) },
      };
    }
    const last = bound === undefined ? undefined : (await deps.withSameInput(deps.projectId, inputHash(step.provider, step.model, bound))).find((t) => t.status === 'FAILED' || t.status === 'CANCELLED');
    return last ? { ...base, state: UNDER_WAY[last.status]!, task: await deps.view(last, labels) } : { ...base, state: 'not generated', task: null };
  };
  // In plan order: each step's input is bound to the tasks of the steps before it.
  const views: PlanStepView[] = [];
  for (const { step, verdict } of decided) views.push(await stepView(step, verdict));
  const scenes: ScenePlanView['scenes'] = [];
  for (const v of views) {
    if (v.scene === null) continue;
    const scene = scenes.find((s) => s.id === v.scene) ?? scenes[scenes.push({ id: v.scene, steps: [] }) - 1]!;
    scene.steps.push(v);
  }
  return { scenes, render: views.find((v) => v.kind === 'render') ?? null, videoReady: videoReady(decided, views, deps) };
}
