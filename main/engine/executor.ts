import { InvalidInput, ResultGone, SubmitError, type ProviderAdapter, type ProviderResult, type SubmitResult } from '../providers/port.ts';
import type { Task } from '../tasks/model.ts';
import type { TaskRepository } from '../tasks/repository.ts';
import type { Clock, OutputStore } from '../ports.ts';
import { estimateCost } from './estimator.ts';
import { prepareRequest } from './prepare.ts';
import { pollUntilDone, type PollOptions } from './poller.ts';
import { INTERRUPTED_IN_SEND_WINDOW, recoveryFor } from './recovery.ts';
import { stopPoint } from './stopPoints.ts';
import { submitDecision, type SubmitFailure } from './submitOutcome.ts';

export type TaskStore = Pick<
  TaskRepository,
  | 'get'
  | 'setEstimate'
  | 'markSubmitStarted'
  | 'recordSubmitted'
  | 'saveProgress'
  | 'complete'
  | 'fail'
  | 'requeue'
  | 'parkUnknown'
  | 'noteLateRequestId'
  | 'retryLater'
>;

export interface ExecutorPorts {
  repo: TaskStore;
  provider: ProviderAdapter;
  clock: Clock;
  outputs: OutputStore;
  random: () => number;
  log: (message: string) => void;
}

export interface ExecutorOptions {
  owner: string;
  leaseMs: number;
  poll: PollOptions;
}

function overBudget(task: Task): string {
  const cost = task.costEstimated === null ? 'it' : `its estimated ${(task.costEstimated / 1e6).toFixed(2)} ${task.currency}`;
  return `not sent: ${cost} would take the project past its budget; raise the budget, then generate again (nothing was charged)`;
}

/** Derived from task and attempt, so a resend of the same attempt carries the same key and a new attempt a new one. */
export function idempotencyKey(taskId: number, attempt: number): string {
  return `studio-task-${taskId}-attempt-${attempt}`;
}

/**
 * Runs one claimed remote task to a resting state. The order is the promise: build and validate the
 * request, mark the boundary, send, record the request id, poll, save the output, complete. Nothing that
 * can fail sits between the mark and the send, and a fenced write that changes no row ends the run.
 */
export async function runRemoteTask(task: Task, ports: ExecutorPorts, options: ExecutorOptions, signal: AbortSignal) {
  const { repo, provider, clock } = ports;
  const lease = () => ({ owner: options.owner, now: clock.now() });
  const lost = (step: string) => ports.log(`task ${task.id}: lease lost before ${step}; stopping`);

  const recovery = recoveryFor(task);
  if (recovery.action === 'park') {
    repo.parkUnknown(task.id, INTERRUPTED_IN_SEND_WINDOW, lease());
    return;
  }
  if (recovery.action === 'poll') {
    await pollAndFinish(task, ports, options, signal);
    return;
  }

  let request;
  try {
    request = await prepareRequest(task, provider, (i) => repo.get(i));
  } catch (err) {
    repo.fail(task.id, err instanceof InvalidInput ? `invalid input: ${err.message}` : (err as Error).message, 'no', lease());
    return;
  }
  const estimate = await estimateCost(provider, request);
  if (estimate && !repo.setEstimate(task.id, estimate.cost, estimate.source, estimate.currency, lease())) return lost('estimating');
  if (signal.aborted) return;

  stopPoint('before-mark', task.id);
  const key = idempotencyKey(task.id, task.attempts + 1);
  const marked = repo.markSubmitStarted(task.id, key, options.leaseMs, lease());
  if (!marked) {
    const now = repo.get(task.id);
    if (now?.leaseOwner !== options.owner || now.status !== 'RUNNING' || now.submitStartedAt !== null) return lost('the boundary mark');
    repo.fail(task.id, overBudget(now), 'no', lease());
    return;
  }
  stopPoint('after-mark', task.id);

  let accepted: SubmitResult | undefined;
  let mayHaveApplied = false;
  for (let resends = 0; !accepted; resends++) {
    try {
      // No abort signal: cutting a request that has left would only turn a known outcome into an unknown one.
      accepted = await provider.submit(request, { idempotencyKey: key });
    } catch (err) {
      const failure: SubmitFailure =
        err instanceof SubmitError ? err.failure : { kind: 'maybe_applied', message: `unexpected error while sending: ${(err as Error).message}` };
      const decision = submitDecision(failure, {
        attempts: marked.attempts,
        maxAttempts: marked.maxAttempts,
        idempotent: provider.capabilities.idempotencyHeader !== null,
        resends,
        mayHaveApplied,
        random: ports.random(),
      });
      mayHaveApplied ||= failure.kind === 'maybe_applied' && !failure.neverBilled;
      switch (decision.action) {
        case 'resend':
          ports.log(`task ${task.id}: ${decision.reason}`);
          continue;
        case 'requeue':
          repo.requeue(task.id, clock.now() + decision.delayMs, decision.reason, lease());
          return;
        case 'fail':
          repo.fail(task.id, decision.reason, 'no', lease());
          return;
        case 'unknown':
          repo.parkUnknown(task.id, decision.reason, lease());
          return;
      }
    }
  }
  stopPoint('after-send', task.id);

  const quote = accepted.quote && { cost: accepted.quote.amount, source: `${provider.id} quote` };
  const submitted = repo.recordSubmitted(task.id, { requestId: accepted.requestId, handle: accepted.handle }, quote, lease());
  if (!submitted) {
    repo.noteLateRequestId(task.id, accepted.requestId, clock.now());
    return lost('recording the request id');
  }
  stopPoint('after-record', task.id);
  if (accepted.result) await finish(submitted, accepted.result, ports, options, signal);
  else await pollAndFinish(submitted, ports, options, signal);
}

async function pollAndFinish(task: Task, ports: ExecutorPorts, options: ExecutorOptions, signal: AbortSignal) {
  const outcome = await pollUntilDone(task, ports, { ...options.poll, owner: options.owner, leaseMs: options.leaseMs }, signal);
  const lease = { owner: options.owner, now: ports.clock.now() };
  switch (outcome.state) {
    case 'succeeded':
      return finish(task, outcome.result, ports, options, signal);
    case 'failed':
      ports.repo.fail(task.id, outcome.error, 'yes', lease, outcome.costActual?.amount ?? null);
      return;
    case 'deadline':
      ports.repo.parkUnknown(task.id, outcome.reason, lease);
      return;
    case 'stopped':
      return;
  }
}

const DOWNLOAD_TRIES = 3;
const RETRY_SAVE_MS = 60_000;

/** Saves every output through a checked temporary file, then completes the row. */
async function finish(task: Task, result: ProviderResult, ports: ExecutorPorts, options: ExecutorOptions, signal: AbortSignal) {
  const saved = [];
  for (const [index, output] of result.outputs.entries()) {
    for (let attempt = 1; ; attempt++) {
      try {
        const body = await ports.provider.download(output, signal);
        const target = { projectId: task.projectId, taskId: task.id, kind: task.kind, index, contentType: output.contentType };
        saved.push(await ports.outputs.save(target, body));
        break;
      } catch (err) {
        if (signal.aborted) return;
        const lease = { owner: options.owner, now: ports.clock.now() };
        if (err instanceof ResultGone) {
          ports.repo.fail(task.id, err.message, 'yes', lease, result.costActual?.amount ?? null);
          return;
        }
        if (attempt >= DOWNLOAD_TRIES) {
          // Paid for and still at the provider: poll and download again later rather than give it up.
          const error = `the result could not be saved yet (${(err as Error).message}); trying again shortly`;
          ports.repo.retryLater(task.id, ports.clock.now() + RETRY_SAVE_MS, error, lease);
          return;
        }
        await ports.clock.sleep(1000 * attempt, signal).catch(() => undefined);
      }
    }
  }
  const first = saved[0]!;
  const done = ports.repo.complete(
    task.id,
    { outputPath: first.path, sha256: first.sha256, costActual: result.costActual?.amount ?? null },
    { owner: options.owner, now: ports.clock.now() },
  );
  if (!done) ports.log(`task ${task.id}: lease lost before completing; its output is at ${first.path}`);
}
