import type { Charged, RemoteRef, Task } from '../domain/tasks/model.ts';
import type { CancelOutcome, ProviderAdapter } from '../providers/port.ts';
import type { TaskStore } from '../store/port.ts';
import { afterCancelDetail, SENT_BEFORE_CANCEL } from '../domain/tasks/cancelledAfterPaid.ts';

/** What the provider said to a cancel: its outcome, none to ask, or an error (a refusal, a cut or late answer). */
export type LateCancelAnswer = CancelOutcome | { none: true } | { error: string };

/**
 * How long a cancel waits for the provider's answer: a person waits on it, and a request whose cancel is not
 * answered is followed and collected all the same.
 */
export const CANCEL_ANSWER_MS = 5_000;

/** A followed request is polled no sooner than this after its cancel was sent, so the answer is in first. */
const FOLLOW_HOLD_MS = 2 * CANCEL_ANSWER_MS;

/** Asks the provider to cancel a request, within CANCEL_ANSWER_MS; never throws. */
export async function askToCancel(provider: ProviderAdapter | undefined, remote: RemoteRef): Promise<LateCancelAnswer> {
  if (!provider?.cancel) return { none: true };
  // The request is cut when the bound runs out, so nothing keeps the process waiting on it.
  const cut = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<LateCancelAnswer>((resolve) => {
    timer = setTimeout(() => {
      resolve({ error: `no answer within ${CANCEL_ANSWER_MS / 1000} s` });
      cut.abort();
    }, CANCEL_ANSWER_MS);
    timer.unref();
  });
  const asked = provider.cancel(remote, cut.signal).then(
    (outcome): LateCancelAnswer => outcome,
    (err: unknown): LateCancelAnswer => ({ error: (err as Error).message }),
  );
  try {
    return await Promise.race([asked, late]);
  } finally {
    clearTimeout(timer);
  }
}

export interface LateCancelVerdict {
  /** The provider stopped the request: the task stays cancelled. Else it is followed. */
  stopped: boolean;
  /** What the answer says of the charge; null when it says nothing (a request still running may yet fail or finish). */
  charged: Charged | null;
  said: string;
}

/**
 * What becomes of a request sent before the cancel reached its worker. Only a provider that says it stopped the
 * request (removed it from its queue) leaves the task cancelled, charged 'no' where the provider documents such a
 * request as never billed; any other answer means it is paid, finished or finishing (fal's ALREADY_COMPLETED, or
 * CANCELLATION_REQUESTED, which only signals a runner that may finish anyway: fal.ai/docs/inference-api/queue/cancel),
 * or that nobody knows (no answer), and ElevenLabs and OpenAI's image and speech calls have no cancel at all. Such a request is followed
 * where it can be asked for by id, unless its result is already in hand (the worker that holds it completes the
 * task); else it stays in the history, possibly charged.
 */
export function lateCancelVerdict(name: string, answer: LateCancelAnswer, pollable: boolean, inHand: boolean, unbilled = false): LateCancelVerdict {
  if (answer === 'cancelled') {
    return unbilled
      ? { stopped: true, charged: 'no', said: `${name} stopped it before it ran, which it does not charge for` }
      : { stopped: true, charged: 'maybe', said: `${name} stopped it (it may still be charged)` };
  }
  // Charged only where the answer says the request ran: it had finished, or the provider makes and bills whatever it accepts.
  const charged: Charged | null = answer === 'finished' || (typeof answer === 'object' && 'none' in answer && pollable) ? 'yes' : null;
  const said =
    answer === 'finished'
      ? `${name} had already finished it`
      : answer === 'requested'
        ? `asked ${name} to cancel it, but it may be running already and may still finish`
        : 'none' in answer
          ? `${name} cannot cancel it`
          : `${name} did not answer the cancel (${answer.error}), so whether it stopped is not known`;
  if (inHand) return { stopped: false, charged, said: `${said}; its result, already received, is kept` };
  if (pollable) return { stopped: false, charged, said: `${said}; it is followed, and its result is collected if it makes one` };
  return { stopped: false, charged: null, said: `${said}, so it may be charged` };
}

/**
 * A request whose id arrived after the person cancelled its task (sent before the cancel reached the worker, or
 * journaled by a worker that died): followed first, where it can be asked for by id, so a crash before the
 * provider's answer leaves a row that a worker polls, never a paid request nobody follows; then cancelled at the
 * provider where it allows, and left cancelled only if the provider stopped it (see lateCancelVerdict). A follow
 * another process wrote first is left to it. The history says what was done.
 */
export async function cancelLateRequest(
  repo: Pick<TaskStore, 'note' | 'followAfterCancel' | 'settleFollow'>,
  provider: ProviderAdapter | undefined,
  task: Pick<Task, 'id' | 'model' | 'remoteHandle'>,
  requestId: string,
  now: () => number,
  inHand = false,
): Promise<void> {
  const name = provider?.id ?? 'the provider';
  const sent = `request ${requestId} was sent before the cancel reached the worker`;
  const follows = !inHand && (provider?.capabilities.pollById ?? false);
  if (follows) {
    const asking = `${sent}; it is followed while ${name} is asked to stop it`;
    if (!(await repo.followAfterCancel(task.id, requestId, asking, now(), now() + FOLLOW_HOLD_MS, SENT_BEFORE_CANCEL))) return;
  }
  const answer = await askToCancel(provider, { requestId, model: task.model, handle: task.remoteHandle });
  const { stopped, charged, said } = lateCancelVerdict(name, answer, follows, inHand, provider?.capabilities.cancelledUnbilled);
  const reason = `${sent}; ${said}`;
  const kept = stopped ? undefined : SENT_BEFORE_CANCEL;
  if (follows) await repo.settleFollow(task.id, requestId, stopped, charged, reason, now(), kept);
  else await repo.note(task.id, reason, afterCancelDetail(requestId, kept), now());
}
