import type { Status, Task } from '../domain/tasks/model.ts';
import { bindStepRefs, type PlannedStep } from './planner.ts';
import { markSameSteps } from './sameSteps.ts';

/** Where a finished task's result is, as this machine sees it. */
export type ResultPlace =
  | { at: 'here' }
  /** Saved by another machine, and not in this machine's media folder: `words` say which machine, where, and what to do. */
  | { at: 'elsewhere'; machine: string; words: string }
  /** Found nowhere: `looked` is each place it was looked for (none for a result whose files were deleted on request). */
  | { at: 'gone'; looked: string[] };

/** What the project already has for one step of a Generate. */
export type Verdict =
  | { action: 'reuse'; task: Task; why?: string }
  | { action: 'new' }
  /**
   * Paid for before, and its result is lost (`looked`: where it was looked for), or kept by another machine
   * (`savedOn`) and not here: bought again only when the person says so.
   */
  | { action: 'rebuy'; lost: Task; why: string; savedOn?: string; looked?: string[] };

export interface Decided {
  step: PlannedStep;
  verdict: Verdict;
}

export const UNDER_WAY: ReadonlySet<Status> = new Set(['PENDING', 'RUNNING', 'SUBMITTED', 'OUTCOME_UNKNOWN']);

/**
 * Judges one step by the project's tasks with its exact provider, model and input (newest first). A finished
 * result here, work under way, or work waiting for a person's decision (possibly paid) stands in for it.
 * Otherwise a paid step is a rebuy, never silently a new purchase: of a result another machine keeps, said so
 * before any lost one; else of a purchase that left no result. `placeOf` is asked only of finished tasks.
 */
export function judgeStep(earlier: readonly Task[], placeOf: (task: Task) => ResultPlace, paid: boolean): Verdict {
  const finished = earlier.filter((t) => t.status === 'SUCCEEDED').map((t) => ({ t, place: placeOf(t) }));
  const reusable = finished.find((f) => f.place.at === 'here')?.t ?? earlier.find((t) => UNDER_WAY.has(t.status));
  if (reusable) return { action: 'reuse', task: reusable };
  if (!paid) return { action: 'new' };
  for (const { t, place } of finished) {
    if (place.at === 'elsewhere') return { action: 'rebuy', lost: t, why: place.words, savedOn: place.machine };
  }
  for (const t of earlier) {
    if (t.status === 'SUCCEEDED') {
      const place = finished.find((f) => f.t === t)!.place;
      return { action: 'rebuy', lost: t, why: 'its output file is gone', ...(place.at === 'gone' && place.looked.length > 0 ? { looked: place.looked } : {}) };
    }
    if (t.status === 'FAILED' && t.charged === 'yes') return { action: 'rebuy', lost: t, why: t.error ?? 'it failed after the provider accepted it' };
    if (t.status === 'FAILED' && t.charged === 'maybe') return { action: 'rebuy', lost: t, why: 'possibly paid: given up after an unknown outcome' };
    if (t.status === 'CANCELLED' && t.charged !== 'no') return { action: 'rebuy', lost: t, why: 'possibly paid: cancelled after it was sent' };
  }
  return { action: 'new' };
}

/**
 * Decides every step of a plan, in order, each step's input bound to the tasks of the steps it uses; `judge`
 * reads what the project has for one step (see judgeStep), by its input and, if it has one, its former input. A lost result is needed again only if a step made
 * from it must be made anew: when everything made from a lost image is still there, the image is not bought again.
 */
export async function decidePlan(
  steps: readonly PlannedStep[],
  judge: (step: PlannedStep, input: unknown, former?: unknown, longer?: unknown[]) => Promise<Verdict>,
): Promise<Decided[]> {
  const ids = new Map<string, number>();
  const decided: Decided[] = [];
  for (const step of markSameSteps(steps)) {
    const first = step.sameAs === undefined ? undefined : decided.find((d) => d.step.key === step.sameAs);
    if (first) {
      const id = ids.get(first.step.key);
      if (id !== undefined) ids.set(step.key, id);
      decided.push({ step, verdict: first.verdict });
      continue;
    }
    const input = bindStepRefs(step.input, ids);
    const former = step.formerInput && bindStepRefs(step.formerInput, ids);
    const longer = (step.longerInputs ?? []).map((i) => bindStepRefs(i, ids)).filter((i) => i !== undefined);
    const verdict: Verdict = input === undefined ? { action: 'new' } : await judge(step, input, former, longer);
    // A lost task's id is bound provisionally, so the steps made from it can be judged by what they have.
    if (verdict.action === 'reuse') ids.set(step.key, verdict.task.id);
    if (verdict.action === 'rebuy') ids.set(step.key, verdict.lost.id);
    decided.push({ step, verdict });
  }
  const firstOf = (key: string) => decided.find((o) => o.step.key === key)?.step.sameAs ?? key;
  for (const d of [...decided].reverse()) {
    if (d.verdict.action !== 'rebuy' || d.step.sameAs !== undefined) continue;
    const madeFrom = decided.filter((o) => o.step.dependsOn.some((k) => firstOf(k) === d.step.key));
    if (madeFrom.length > 0 && madeFrom.every((o) => o.verdict.action === 'reuse')) d.verdict = { action: 'reuse', task: d.verdict.lost, why: `${d.verdict.why}, but every step made from it is kept` };
  }
  for (const d of decided) if (d.step.sameAs !== undefined) d.verdict = decided.find((o) => o.step.key === d.step.sameAs)!.verdict;
  return decided;
}
