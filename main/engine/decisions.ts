import type { CancelOutcome, ProviderAdapter } from '../providers/port.ts';
import type { Task } from '../tasks/model.ts';
import type { TaskStore } from '../store/port.ts';

export type Decision = { adopt: string } | { resubmit: true } | { giveUp: true };

export class DecisionRefused extends Error {}

/** The request a person chose already belongs to another task; adopting it would count one result twice. */
export class RequestTaken extends DecisionRefused {
  constructor(
    readonly requestId: string,
    readonly holder: Task,
  ) {
    super(
      `request ${requestId} already belongs to task ${holder.id} (${holder.status}); one request is one result, so it cannot ` +
        `be adopted twice. Look for this task's own request, or resubmit it or give it up.`,
    );
  }
}

async function current(repo: TaskStore, id: number): Promise<Task> {
  const task = await repo.get(id);
  if (!task) throw new DecisionRefused(`there is no task ${id}`);
  return task;
}

/** A person's decision on a task whose outcome is unknown; each is recorded in the task's events. */
export async function resolveUnknown(repo: TaskStore, id: number, decision: Decision, now: number): Promise<Task> {
  const task = await current(repo, id);
  if (task.status !== 'OUTCOME_UNKNOWN') {
    throw new DecisionRefused(`task ${id} is ${task.status}; only a task whose outcome is unknown needs a decision`);
  }
  let result: Task | undefined;
  if ('adopt' in decision) {
    const requestId = decision.adopt.trim();
    if (!requestId) throw new DecisionRefused('give the request id to adopt, as the provider shows it');
    result = await repo.adopt(id, requestId, now);
    const holder = result ? undefined : await repo.requestHolder(id, requestId);
    if (holder) throw new RequestTaken(requestId, holder);
  } else if ('resubmit' in decision) {
    result = await repo.resubmit(id, now);
  } else {
    result = await repo.giveUp(id, now);
  }
  if (!result) throw new DecisionRefused(`task ${id} changed while deciding; look at it again`);
  return result;
}

/**
 * Cancels unfinished work. A submitted request is cancelled at the provider first, where it can be, and the
 * task is cancelled only when the provider stopped the request. A request that had already finished, or that
 * the provider could only pass the cancel on to (it may still finish, and charge), is left to be collected,
 * with that said in its history: a paid result is never thrown away.
 */
export async function cancelTask(repo: TaskStore, provider: ProviderAdapter | undefined, id: number, now: number) {
  const task = await current(repo, id);
  let providerNote = '';
  if (task.status === 'SUBMITTED' && task.remoteRequestId && provider?.cancel) {
    let outcome: CancelOutcome;
    try {
      outcome = await provider.cancel({ requestId: task.remoteRequestId, model: task.model, handle: task.remoteHandle });
    } catch (err) {
      throw new DecisionRefused(
        `task ${id} was not cancelled: ${provider.id} could not cancel request ${task.remoteRequestId} (${(err as Error).message}). ` +
          'It may have finished already; the studio will collect the result you paid for.',
      );
    }
    if (outcome === 'finished') {
      throw new DecisionRefused(`task ${id} was not cancelled: ${provider.id} had already finished request ${task.remoteRequestId}; the studio will collect the result you paid for.`);
    }
    if (outcome === 'requested') {
      const note = `asked ${provider.id} to cancel request ${task.remoteRequestId}; it may be running already, so it may still finish and be charged, and then its result is collected`;
      await repo.note(id, note, { requestId: task.remoteRequestId }, now);
      return { task, cancelled: false, providerNote: note };
    }
    providerNote = `${provider.id} cancelled the request`;
  }
  const cancelled = await repo.cancel(id, now);
  if (!cancelled) throw new DecisionRefused(`task ${id} is ${(await repo.get(id))?.status ?? task.status}; only unfinished work can be cancelled`);
  return { task: cancelled, cancelled: true, providerNote };
}
