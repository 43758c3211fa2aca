import type { Candidate, ProviderAdapter } from '../providers/port.ts';
import type { Task } from '../tasks/model.ts';
import type { TaskRepository } from '../tasks/repository.ts';
import { DecisionRefused } from './decisions.ts';
import { prepareRequest } from './prepare.ts';

/** Clocks differ between this machine and the provider; look a little either side of the send window. */
const SKEW_MS = 2 * 60_000;

export interface Reconciliation {
  task: Task;
  candidates: (Candidate & { why: string })[];
}

/**
 * For a task whose outcome is unknown, the requests at the provider that could be the one it sent:
 * made in its send window, with the same input, not already another task's. It only looks: adopting one
 * is a person's decision (`resolve --adopt`), and nothing here ever sends anything.
 */
export async function reconcile(
  repo: Pick<TaskRepository, 'get' | 'events' | 'requestIdsInUse'>,
  provider: ProviderAdapter | undefined,
  id: number,
  now: number,
): Promise<Reconciliation> {
  const task = repo.get(id);
  if (!task) throw new DecisionRefused(`there is no task ${id}`);
  if (task.status !== 'OUTCOME_UNKNOWN') throw new DecisionRefused(`task ${id} is ${task.status}; only an unknown outcome is reconciled`);

  // A worker that received a request id after losing the task said so in the task's history.
  const reported = task.remoteRequestId
    ? [{ requestId: task.remoteRequestId, createdAt: task.submittedAt ?? task.submitStartedAt ?? 0, status: 'saved on the task', inputMatches: true, why: 'the request id saved on this task' }]
    : [];
  for (const e of repo.events(id)) {
    const late = (e.detail as { requestId?: unknown } | null)?.requestId;
    if (typeof late === 'string' && e.fromStatus === e.toStatus && !reported.some((r) => r.requestId === late)) {
      reported.push({ requestId: late, createdAt: e.at, status: 'reported by a worker', inputMatches: true, why: 'a worker received this id after it lost the task' });
    }
  }
  if (!provider?.lookup) {
    if (reported.length > 0) return { task, candidates: reported };
    throw new DecisionRefused(
      `${task.provider} cannot list past requests; look for a request made at ${new Date(task.submitStartedAt ?? task.createdAt).toISOString()} in its dashboard`,
    );
  }
  const request = await prepareRequest(task, provider, (i) => repo.get(i));
  const sentAt = task.submitStartedAt ?? task.createdAt;
  const found = await provider.lookup({ from: sentAt - SKEW_MS, to: (task.finishedAt ?? now) + SKEW_MS }, request);
  const taken = repo.requestIdsInUse(task.provider, found.map((c) => c.requestId), id);
  const matching = found
    .filter((c) => c.inputMatches && !taken.has(c.requestId) && !reported.some((r) => r.requestId === c.requestId))
    .sort((a, b) => Math.abs(a.createdAt - sentAt) - Math.abs(b.createdAt - sentAt))
    .map((c) => ({ ...c, why: `same input, made ${Math.round((c.createdAt - sentAt) / 1000)} s after the send started` }));
  return { task, candidates: [...reported, ...matching] };
}
