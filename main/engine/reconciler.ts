import type { InputFiles } from './outputLocator.ts';
import type { Candidate, ProviderAdapter } from '../providers/port.ts';
import type { Task } from '../domain/tasks/model.ts';
import type { TaskStore } from '../store/port.ts';
import { RIVAL_RECEIPTS } from '../store/receiptParams.ts';
import { DecisionRefused } from './decisions.ts';
import { DEFAULT_QUEUE_MS } from '../domain/engineOptions.ts';
import type { ListedBy } from './listedBy.ts';
import { SKEW_MS, type LookupFacts } from './lookupVerdict.ts';
import { prepareRequest } from './prepare.ts';
import { whenListed } from './whenListed.ts';

export interface Reconciliation {
  task: Task;
  candidates: (Candidate & { why: string })[];
  /** Which requests the provider's listing shows, in words from its docs, or null where it says nothing. */
  lists: string | null;
  /** Set while the listing may not show the request yet (it shows one only once it has ended): until when, and why. */
  listed: ListedBy | null;
  /** Set when the listing had more than a lookup reads, so a request absent from what was read may be in the rest. */
  cut: string | null;
  /**
   * Paid requests of this step that a task of their own collects (see applyReceipt), such as a later attempt a database
   * restored from an older backup had sent: the step's result may be there, so buying it again is not the only way.
   */
  collected: { requestId: string; taskId: number }[];
}

type LookupRepo = Pick<TaskStore, 'get' | 'events' | 'requestIdsInUse' | 'recentDurations' | 'unendedBefore'>;

/** A lookup could not be made (the provider did not answer, or not in a form the studio reads): ask again later. */
export class LookupFailed extends Error {
  constructor(
    message: string,
    /** Until when a listing that shows a request once it has ended could still not show this one, if that is still to come. */
    readonly listedBy: number | null = null,
  ) {
    super(message);
  }
}

/** Request ids saved on the task, or reported in its history by a worker that received one after it lost the task. */
async function reportedIds(repo: LookupRepo, task: Task): Promise<{ requestId: string; createdAt: number; status: string; inputMatches: true; why: string }[]> {
  const reported = task.remoteRequestId
    ? [{ requestId: task.remoteRequestId, createdAt: task.submittedAt ?? task.submitStartedAt ?? 0, status: 'saved on the task', inputMatches: true as const, why: 'the request id saved on this task' }]
    : [];
  for (const e of await repo.events(task.id)) {
    const detail = e.detail as { requestId?: unknown; collectedAs?: unknown; heard?: unknown } | null;
    const late = detail?.requestId;
    // An id a task of its own collects (see applyReceipt) is that task's, never a candidate for this one.
    if (typeof late === 'string' && detail?.collectedAs === undefined && e.fromStatus === e.toStatus && !reported.some((r) => r.requestId === late)) {
      reported.push(
        e.reason === RIVAL_RECEIPTS
          ? { requestId: late, createdAt: typeof detail?.heard === 'number' ? detail.heard : e.at, status: 'in the receipt journal', inputMatches: true, why: 'journaled for this attempt beside another request; only one of them is this task\'s' }
          : { requestId: late, createdAt: e.at, status: 'reported by a worker', inputMatches: true, why: 'a worker received this id after it lost the task' },
      );
    }
  }
  return reported;
}

/** The requests of this step its history says a task of their own collects (see Reconciliation.collected). */
async function collectedIds(repo: LookupRepo, task: Task): Promise<Reconciliation['collected']> {
  return (await repo.events(task.id)).flatMap((e) => {
    const detail = e.detail as { requestId?: unknown; collectedAs?: unknown } | null;
    return typeof detail?.requestId === 'string' && typeof detail.collectedAs === 'number' ? [{ requestId: detail.requestId, taskId: detail.collectedAs }] : [];
  });
}

/**
 * When the send started and when the task was parked: the request, if the provider made it, was made in between.
 * Never ending before it starts: the parking's time is the parking machine's clock, which may have been stepped
 * back after it was measured, while the send's start is the database's.
 */
export function sendWindow(task: Task, now: number): { from: number; to: number } {
  const from = task.submitStartedAt ?? task.createdAt;
  return { from, to: Math.max(from, task.finishedAt ?? now) };
}

/**
 * Asks the provider for the requests of the task's endpoint or model from the start of its send until now, or,
 * where the listing shows a request once it has ended, until it is surely listed; each marked when it already
 * belongs to another task, by any of the ids the provider gives it. Only looks; nothing here sends anything. Whatever keeps the lookup
 * from being made is a LookupFailed, in words.
 */
export async function lookUp(
  repo: LookupRepo,
  files: InputFiles,
  provider: ProviderAdapter & Required<Pick<ProviderAdapter, 'lookup'>>,
  task: Task,
  now: number,
  queueMs: number,
  signal?: AbortSignal,
): Promise<Pick<LookupFacts, 'window' | 'found' | 'known' | 'listed' | 'cut'>> {
  const window = sendWindow(task, now);
  const listed = await whenListed(repo, provider, task, queueMs, now);
  // A listing that shows a request once it has ended is asked only for the life of this one, from its send to
  // when it is surely listed: the same cap on what is read then covers far fewer of the account's requests.
  const to = listed ? Math.max(listed.at, window.to) : Math.max(now, window.to);
  let found;
  try {
    const request = await prepareRequest(task, provider, files, { repo });
    found = await provider.lookup({ from: window.from - SKEW_MS, to: to + SKEW_MS }, request, signal);
  } catch (err) {
    throw new LookupFailed(`the lookup at ${task.provider} could not be made (${(err as Error).message})`, listed && now < listed.at ? listed.at : null);
  }
  const taken = await repo.requestIdsInUse(task.provider, found.flatMap((c) => [c.requestId, ...(c.aliases ?? [])]), task.id);
  return {
    window,
    found: found.map((c) => ({ ...c, taken: [c.requestId, ...(c.aliases ?? [])].some((id) => taken.has(id)) })),
    known: (await reportedIds(repo, task)).map((r) => r.requestId),
    listed,
    cut: found.cut ?? null,
  };
}

/**
 * For a task whose outcome is unknown, the requests at the provider that could be the one it sent, for a
 * person: made in its send window with the same input and not already another task's, and those of the same
 * model whose input the provider no longer keeps, each with its time and why it is offered.
 */
export async function reconcile(
  repo: LookupRepo,
  files: InputFiles,
  provider: ProviderAdapter | undefined,
  id: number,
  now: number,
  queueMs = DEFAULT_QUEUE_MS,
): Promise<Reconciliation> {
  const task = await repo.get(id);
  if (!task) throw new DecisionRefused(`there is no task ${id}`);
  if (task.status !== 'OUTCOME_UNKNOWN') throw new DecisionRefused(`task ${id} is ${task.status}; only an unknown outcome is reconciled`);

  const reported = await reportedIds(repo, task);
  const collected = await collectedIds(repo, task);
  if (!provider?.lookup) {
    if (reported.length + collected.length > 0) return { task, candidates: reported, lists: null, listed: null, cut: null, collected };
    throw new DecisionRefused(
      `${task.provider} cannot list past requests; look for a request made at ${new Date(task.submitStartedAt ?? task.createdAt).toISOString()} in its dashboard`,
    );
  }
  const { window, found, listed, cut } = await lookUp(repo, files, provider as ProviderAdapter & Required<Pick<ProviderAdapter, 'lookup'>>, task, now, queueMs);
  const after = (c: Candidate) => `made ${Math.round((c.createdAt - window.from) / 1000)} s after the send started`;
  const inWindow = (c: Candidate) => c.createdAt >= window.from - SKEW_MS && c.createdAt <= window.to + SKEW_MS;
  const offered = found
    .filter((c) => !c.taken && !reported.some((r) => r.requestId === c.requestId))
    .filter((c) => c.inputMatches || (c.inputGone && inWindow(c)))
    .sort((a, b) => Math.abs(a.createdAt - window.from) - Math.abs(b.createdAt - window.from))
    .map(({ taken: _, ...c }) => ({
      ...c,
      why: c.inputMatches ? `same input, ${after(c)}` : `same model, ${after(c)}; its input could not be compared: ${c.inputGone}`,
    }));
  return { task, candidates: [...reported, ...offered], lists: provider.capabilities.lookupLists ?? null, listed: listed && now < listed.at ? listed : null, cut: cut ?? null, collected };
}
