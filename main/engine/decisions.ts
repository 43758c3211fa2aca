import type { ProviderAdapter } from '../providers/port.ts';
import type { Task } from '../domain/tasks/model.ts';
import type { ResultRecord } from '../domain/ports.ts';
import type { Store, TaskStore } from '../store/port.ts';
import { afterCancelDetail, CANCEL_UNANSWERED, FINISHED_ANYWAY } from '../domain/tasks/cancelledAfterPaid.ts';
import { askToCancel } from './lateCancel.ts';
import { DEFAULT_QUEUE_MS } from '../domain/engineOptions.ts';
import type { ListedBy } from './listedBy.ts';
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
    const held = holder.remoteRequestId !== null && holder.remoteRequestId.toLowerCase() !== requestId.toLowerCase();
    super(
      `request ${requestId} already belongs to task ${holder.id} (${holder.status}${held ? `, which holds it as ${holder.remoteRequestId}` : ''}); ` +
        `one request is one result, so it cannot be adopted twice. Look for this task's own request, or resubmit it or give it up.`,
    );
  }
}

/**
 * Every name the provider gives the request a person chose (see ProviderAdapter.aliases), so a request another task
 * holds under another of its names is refused too. Refused when the provider cannot be asked: that could not be checked.
 */
async function namesOf(provider: ProviderAdapter | undefined, requestId: string): Promise<string[]> {
  if (!provider?.aliases) return [requestId];
  try {
    return await provider.aliases(requestId);
  } catch (err) {
    throw new DecisionRefused(
      `request ${requestId} was not adopted: ${provider.id} could not be asked which request it names (${(err as Error).message}), ` +
        'so whether another task already holds it under another name cannot be checked; try again later',
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
    const names = await namesOf(check?.provider, requestId);
    result = await repo.adopt(id, requestId, now, names);
    const holder = result ? undefined : await repo.requestHolder(id, names);
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

/** What a cancel reads and writes beyond the task table: where a saved result is found, and one transaction. */
export interface CancelPorts {
  transaction: Store['transaction'];
  /** The result record of the task's current attempt on disk, whole, or null (see OutputStore.find). */
  saved: (task: Task) => Promise<(ResultRecord & { missing: number }) | null>;
}

/**
 * Cancels unfinished work: cancel stops what is not paid for yet, and whatever is paid is collected and kept. A
 * submitted request is cancelled at the provider first, where it can be (within CANCEL_ANSWER_MS), and the task is
 * cancelled only when the provider stopped the request. A request that had already ended, that the provider could
 * only pass the cancel on to (it may still finish, and charge), whose cancel went unanswered, or that a provider
 * with no cancel has made and billed, is left to be collected; a result already saved is linked at once. Whatever the
 * provider answers, the pending work that needs the task is cancelled with it: it is not paid for yet. A collected
 * task ends SUCCEEDED, saying what happened (see cancelledAfterPaid.ts).
 */
export async function cancelTask(repo: TaskStore, provider: ProviderAdapter | undefined, id: number, now: number, ports?: CancelPorts) {
  const task = await current(repo, id);
  const requestId = task.remoteRequestId;
  const notCancelled = async (note: string, kept?: string) => {
    if (requestId) await repo.note(id, note, afterCancelDetail(requestId, kept), now);
    await repo.cancelDependentsOf(id, now);
    return { task, cancelled: false, providerNote: note };
  };
  if (task.status === 'SUBMITTED' && requestId) {
    const kept = ports && (await keepSaved(ports, task, now));
    if (kept) return { task: kept, cancelled: false, providerNote: `${task.provider} had already made it and it was paid for; its result is kept` };
    if (provider && !provider.cancel && provider.capabilities.pollById) {
      return notCancelled(`${provider.id} cannot stop request ${requestId}, which it makes and bills once accepted; its result is collected`);
    }
  }
  let providerNote = '';
  if (task.status === 'SUBMITTED' && requestId && provider?.cancel) {
    const answer = await askToCancel(provider, { requestId, model: task.model, handle: task.remoteHandle });
    if (typeof answer === 'object') {
      const why = 'error' in answer ? answer.error : 'it has no cancel';
      const { providerNote: note } = await notCancelled(
        `${provider.id} did not answer the cancel of request ${requestId} (${why}); it may still be running or have finished, and be charged, so the studio keeps following it and collects its result if it finishes`,
        CANCEL_UNANSWERED,
      );
      throw new DecisionRefused(`task ${id} was not cancelled: ${note}. What needs it is cancelled.`);
    }
    if (answer === 'finished') {
      // An ended request may have failed (Replicate's "failed"): its outcome is collected, a result only if it made one.
      const { providerNote: note } = await notCancelled(`${provider.id} had already ended request ${requestId}; the studio collects its outcome, and its result if it made one`);
      throw new DecisionRefused(`task ${id} was not cancelled: ${note}. What needs it is cancelled.`);
    }
    if (answer === 'requested') {
      return notCancelled(
        `asked ${provider.id} to cancel request ${requestId}; it may be running already, so it may still finish and be charged, and then its result is collected`,
        FINISHED_ANYWAY,
      );
    }
    providerNote = `${provider.id} cancelled the request`;
  }
  // Stopped in the provider's queue, which it documents as never billed (fal.ai/docs/documentation/model-apis/pricing).
  const unbilled = providerNote !== '' && (provider?.capabilities.cancelledUnbilled ?? false);
  if (unbilled) providerNote = `${providerNote}; it had not started, so it is not charged`;
  const cancelled = await repo.cancel(id, now, unbilled);
  if (!cancelled) throw new DecisionRefused(`task ${id} is ${(await repo.get(id))?.status ?? task.status}; only unfinished work can be cancelled`);
  if (task.status === 'RUNNING' && task.submitStartedAt !== null) providerNote = whileSending(task.provider, provider, requestId);
  return { task: cancelled, cancelled: true, providerNote };
}

/**
 * What a cancel of a task whose request was being sent says: the request may have left and be charged, and what the
 * studio does about it (see cancelLateRequest and the lookups of cancelled sends in unknownLookups.ts).
 */
function whileSending(name: string, provider: ProviderAdapter | undefined, requestId: string | null): string {
  const stop = provider?.cancel ? `asks ${name} to stop it, and collects its result if ${name} finishes it anyway` : `collects its result, which ${name} makes and bills once accepted`;
  // Named, its answer still arriving: a provider that cannot be asked by id again has only that answer to give the result.
  if (requestId) {
    const kept = provider?.capabilities.pollById ? `the studio ${stop}` : `its result is kept if the answer arrives whole, and it stays counted as possibly charged if it does not`;
    return `${name} had named its request ${requestId} and its answer was still arriving, so it may be charged: ${kept}`;
  }
  const find = provider?.capabilities.lookup ? `; if no id comes back, it looks for the request at ${name}` : '';
  return `its request was being sent to ${name}, so it may have been sent and charged: if ${name} names it, the studio ${stop}${find}`;
}

/**
 * A submitted task whose result is already saved (a synchronous answer, saved before its worker completed the row):
 * paid, so the cancel stops only what depends on it, and the saved files are linked, in one transaction, so the
 * task is never seen cancelled with its charge downgraded and its files linked to nothing.
 */
async function keepSaved(ports: CancelPorts, task: Task, now: number): Promise<Task | undefined> {
  const found = await ports.saved(task);
  if (!found || found.outputs.length === 0) return undefined;
  const out = { outputs: found.outputs, costActual: found.costActual, costSource: found.costSource, costUnits: found.costUnits ?? null, costReported: found.costReported ?? null, requestId: found.requestId };
  return ports.transaction(async ({ tasks }) => {
    if (!(await tasks.cancel(task.id, now))) return undefined;
    const kept = await tasks.completeAttempt(task.id, found.idempotencyKey, out, now);
    if (!kept) throw new DecisionRefused(`task ${task.id} changed while it was being cancelled; look at it again`);
    return kept;
  });
}
