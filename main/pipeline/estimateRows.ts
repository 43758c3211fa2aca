/** Builds the estimate's row for one step from its verdict and price: reused, bought, bought again, or the creator's own. */
import { isSimulated } from '../domain/simulated.ts';
import type { Task } from '../domain/tasks/model.ts';
import type { MissingKeyNote } from './missingKeys.ts';
import type { OwnFound } from './ownFiles.ts';
import type { PlannedStep } from './planner.ts';
import type { Verdict } from './reuse.ts';
import type { LostResult, StepEstimate } from './estimate.ts';

export type Price = Pick<StepEstimate, 'cost' | 'currency' | 'source' | 'credits'>;

function lostResult({ lost: task, why, savedOn, looked }: Extract<Verdict, { action: 'rebuy' }>): LostResult {
  const lost: LostResult = { taskId: task.id, paid: task.charged === 'yes' ? 'yes' : 'maybe', cost: task.costActual ?? task.costEstimated ?? 0, currency: task.currency, why };
  return { ...lost, ...(savedOn === undefined ? {} : { savedOn }), ...(looked === undefined ? {} : { looked }) };
}

export function stepEstimate(step: PlannedStep, verdict: Verdict, price: Price, keyMissing: MissingKeyNote | null = null): StepEstimate {
  return {
    key: step.key,
    scene: step.scene,
    kind: step.kind,
    provider: step.provider,
    model: step.model,
    action: verdict.action,
    taskId: verdict.action === 'reuse' ? verdict.task.id : null,
    ...price,
    lost: verdict.action === 'rebuy' ? lostResult(verdict) : null,
    simulated: isSimulated(step.provider),
    keyMissing,
    ...(step.sameAs === undefined ? {} : { sameAs: step.sameAs }),
  };
}

/** The estimate's row for a scene's own still or clip: nothing is bought. */
export function yoursEstimate(scene: string, still: OwnFound, currency: string, kind: 'image' | 'clip' = 'image'): StepEstimate {
  return {
    key: `${scene}:${kind}`,
    scene,
    kind,
    provider: 'yours',
    model: '$output' in still.ref ? `task ${still.ref.$output}` : 'file',
    action: 'yours',
    taskId: '$output' in still.ref ? still.ref.$output : null,
    cost: 0,
    currency,
    source: still.words,
    lost: null,
    simulated: false,
    keyMissing: null,
  };
}

export function reusedPrice(task: Task, why: string | undefined, currency: string): Price {
  return { cost: 0, currency, source: `reused: task ${task.id} ${why ? `is kept; ${why}` : 'already has this exact step'}` };
}


/** The row of a step that is one purchase with an earlier step of the same Generate (see sameSteps.ts). */
export function samePrice(sameAs: string, currency: string): Price {
  return { cost: 0, currency, source: `the same as step ${sameAs}: bought once, used by both` };
}
