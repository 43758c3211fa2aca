import type { CancelOutcome, ProviderAdapter } from '../providers/port.ts';
import type { Task } from '../tasks/model.ts';
import type { TaskStore } from '../store/port.ts';
import { DEFAULT_QUEUE_MS, type ListedBy } from './listedBy.ts';
import { whenListed, type ListedRepo } from './whenListed.ts';

/** `evenIfRunning`: resubmit although the request may still be queued or running at the provider (see NotListedYet). */
export type Decision = { adopt: string } | { resubmit: true; evenIfRunning?: boolean } | { giveUp: true };

export class DecisionRefused extends Error {}

/**
 * A resubmit while the provider's listing could not show the request yet (it lists one once it has ended): the
 * request may still be queued or running there, and be charged, so a resubmit could pay twice. `flag` is how the
 * caller spells the choice to do it anyway.
 */
export class NotListedYet extends DecisionRefused {
  constructor(id: number, provider: string, until: number, flag: string) {
    super(
      `task ${id} was not resubmitted: its request may still be queued or running at ${provider}, which could list it only by ` +
        `${new Date(until).toISOString()}; look again then (studio reconcile ${id}), or resubmit anyway, paying twice if it was accepted: ${flag}`,
    );
  }
}

/** Where a resubmit is checked against the provider's listing: its adapter and the queue allowance setting. */
export interface ResubmitCheck {
  provider: ProviderAdapter | undefined;
  queueMs?: number;
  /** How the caller spells the choice to resubmit anyway, for the refusal's words. */
  flag: string;
}

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

/**
 * Until when a request of this task may still be queued or running at a provider whose listing shows one only
 * once it has ended, and why then; null once it could be listed, and for any other provider. The refusal of a
 * resubmit and what the app shows before one are both judged by this.
 */
export async function mayStillRunUntil(repo: ListedRepo, task: Task, now: number, check: Pick<ResubmitCheck, 'provider' | 'queueMs'>): Promise<ListedBy | null> {
  const listed = check.provider ? await whenListed(repo, check.provider, task, check.queueMs ?? DEFAULT_QUEUE_MS, now) : null;
  return listed && now < listed.at ? listed : null;
}

async function current(repo: TaskStore, id: number): Promise<Task> {
  const task = await repo.get(id);
  if (!task) throw new DecisionRefused(`there is no task ${id}`);
  return task;
}

/**
 * A person's decision on a task whose outcome is unknown; each is recorded in the task's events. A resubmit
 * while the request could still be running at the provider (`check`) is refused unless chosen anyway, and then
 * what the person was told goes on the decision's event.
 */
export async function resolveUnknown(repo: TaskStore, id: number, decision: Decision, now: number, check?: ResubmitCheck): Promise<Task> {
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
    const running = check ? await mayStillRunUntil(repo, task, now, check) : null;
    if (running && decision.evenIfRunning !== true) throw new NotListedYet(id, task.provider, running.at, check!.flag);
    result = await repo.resubmit(id, now, running ? { evenIfRunning: true, listedBy: new Date(running.at).toISOString(), why: running.why } : undefined);
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
