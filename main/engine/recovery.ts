import type { Task } from '../domain/tasks/model.ts';

export type Recovery = { action: 'requeue' } | { action: 'poll' } | { action: 'park'; status: 'OUTCOME_UNKNOWN' };

/**
 * What to do with a row whose lease is void. The request id is the strongest evidence on the row,
 * so it is tested first: a healthy submitted task has both columns set.
 */
export function recoveryFor(task: Pick<Task, 'status' | 'remoteRequestId' | 'submitStartedAt'>): Recovery {
  if (task.status === 'SUBMITTED' && task.remoteRequestId) return { action: 'poll' };
  if (task.submitStartedAt === null) return { action: 'requeue' };
  return { action: 'park', status: 'OUTCOME_UNKNOWN' };
}

/** Why a row parked by recovery is unknown: before the provider named the request, or while its answer arrived. */
export function interruptedReason(task: Pick<Task, 'remoteRequestId'>): string {
  return task.remoteRequestId
    ? `the studio stopped while the answer to request ${task.remoteRequestId} was arriving; the provider may have charged it, and it cannot be asked for it again`
    : 'the studio stopped after it started sending this request and before the provider confirmed it; the provider may have accepted and charged it';
}
