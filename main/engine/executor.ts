import { moneyWords } from '../domain/money.ts';
import { SubmitError, type ProviderResult, type SubmitResult } from '../providers/port.ts';
import { ANSWER_KEPT } from '../domain/tasks/keptAnswer.ts';
import { InvalidInput } from '../providers/invalidInput.ts';
import type { Clock } from '../domain/ports.ts';
import type { Task } from '../domain/tasks/model.ts';
import type { InputUpload } from '../store/port.ts';
import { completeFromDisk } from './completion.ts';
import { untilWritten } from './durableWrite.ts';
import { estimateCost } from './estimator.ts';
import type { ExecutorOptions, ExecutorPorts } from './executorPorts.ts';
import { prepareRequest } from './prepare.ts';
import { UploadFailed } from './inputUploads.ts';
import { UPLOAD_FAILED_DETAIL, uploadFailures, uploadRetry } from './uploadRetry.ts';
import { pollUntilDone } from './poller.ts';
import { interruptedReason, recoveryFor } from './recovery.ts';
import { RequestIdKeeper } from './requestIdKeeper.ts';
import { saveResult } from './resultSaver.ts';
import { storableFailure, storableResult } from './storableCost.ts';
import { askAgainLater, collectPolicy, collectRetry, missingRounds, roundNow, type MissingResult, type MissingRounds } from './collectRetry.ts';
import { keptDetail, keptResult } from './keptResult.ts';
import { titleOf } from '../providers/registry.ts';
import { saysNothingIsThere } from '../providers/expiringFiles.ts';
import { stopPoint } from './stopPoints.ts';
import { submitDecision, type SubmitFailure } from '../domain/submitOutcome.ts';

/** How long a request still running at the provider after the poll deadline waits between looks. */
export const SLOW_POLL_MS = 60_000;

function overBudget(task: Task): string {
  if (task.costEstimated === null) {
    return 'not sent: its price is unknown and the project has no budget left for it; raise the budget, then generate again (nothing was charged)';
  }
  const cost = `its estimated ${moneyWords(task.costEstimated, task.currency)}`;
  return `not sent: ${cost} would take the project past its budget; raise the budget, then generate again (nothing was charged)`;
}

/**
 * Derived from database, task and attempt, so a resend of the same attempt carries the same key and a new attempt a
 * new one, and task 1 of one database never shares a key with task 1 of another (the database's id is 32 hex digits).
 * Keys written before databases had ids read `studio-task-N-attempt-M`; what reads a key reads both.
 */
export function idempotencyKey(database: string, taskId: number, attempt: number): string {
  return `studio-${database}-task-${taskId}-attempt-${attempt}`;
}

function minutes(ms: number): string {
  return `${Math.max(1, Math.round(ms / 60_000))} min`;
}

/**
 * Runs one claimed remote task to a resting state. The order is the promise: build and validate the
 * request, mark the boundary, send, record the request id (the moment the provider names it), poll, save
 * the output, complete. Nothing that can fail sits between the mark and the send, and a fenced write that
 * changes no row ends the run.
 */
export async function runRemoteTask(task: Task, ports: ExecutorPorts, options: ExecutorOptions, signal: AbortSignal) {
  const { repo, provider, clock } = ports;
  const lease = () => ({ owner: options.owner, now: clock.now() });
  const durably = <T>(write: () => Promise<T>) => untilWritten(write, ports, signal);
  const lost = (step: string) => ports.log(`task ${task.id}: lease lost before ${step}; stopping`);

  // A result saved before a crash completes the row from disk: nothing is fetched or bought again. One that
  // lost files in the crash is fetched again where the provider can be asked, else kept as far as it goes.
  if (task.submitStartedAt !== null) {
    const found = await ports.outputs.find(task);
    if (found && (found.missing === 0 || !provider.capabilities.pollById)) {
      const lost = found.missing > 0 ? [`${found.missing} file(s) were lost when the studio stopped while saving them`] : [];
      return completeFromDisk(task, found, ports, options, signal, lost);
    }
  }
  const recovery = recoveryFor(task);
  if (recovery.action === 'park') {
    await durably(() => repo.parkUnknown(task.id, interruptedReason(task), lease()));
    return;
  }
  if (recovery.action === 'poll') return pollAndFinish(task, ports, options, signal);

  let request;
  const uploads: InputUpload[] = [];
  try {
    request = await prepareRequest(task, provider, ports.files, { repo, sending: uploads });
  } catch (err) {
    // Nothing was sent: an input file the provider's storage did not take is tried again a few times, or never
    // where the same answer would come back; either way the task ends rather than waiting on it forever.
    if (err instanceof UploadFailed) {
      const next = uploadRetry(err, uploadFailures(await repo.events(task.id)), ports.random());
      if (next.action === 'fail') await durably(() => repo.fail(task.id, next.reason, 'no', lease()));
      else await durably(() => repo.requeue(task.id, clock.now() + next.delayMs, err.message, lease(), UPLOAD_FAILED_DETAIL));
      return;
    }
    await repo.fail(task.id, err instanceof InvalidInput ? `invalid input: ${err.message}` : (err as Error).message, 'no', lease());
    return;
  }
  const estimate = await estimateCost(provider, request, options.prices?.(), true, (p, m) => repo.recentBilledSeconds(p, m));
  if (estimate && !(await repo.setEstimate(task.id, estimate.cost, estimate.source, estimate.currency, lease()))) return lost('estimating');
  if (signal.aborted) return;

  stopPoint('before-mark', task.id);
  const key = idempotencyKey(options.database, task.id, task.attempts + 1);
  // Counted from before the write leaves: an answer held up (a link gone silent after the write committed) is time
  // in which the lease may have run out and the row been parked, resubmitted and bought elsewhere.
  const fresh = leaseFreshness(clock, options.leaseMs);
  const mark = await repo.markSubmitStarted(task.id, key, options.leaseMs, lease(), uploads);
  if ('refused' in mark) {
    if (mark.refused !== 'budget') return lost('the boundary mark');
    await repo.fail(task.id, overBudget(mark.task), 'no', lease());
    return;
  }
  const marked = mark.marked;
  // Every write of this attempt from here names it: the row may since be another attempt under the same owner.
  const attempt = () => ({ ...lease(), attempt: key });
  stopPoint('after-mark', task.id);

  // The row moved on before a send: when nothing of this attempt ever left and the person cancelled it, it says so.
  const notSent = async (resends: number) => {
    if (resends === 0) await durably(() => repo.notSentAfterCancel(task.id, key, clock.now()));
    return lost('sending');
  };
  const ids = new RequestIdKeeper(marked, key, options.database, ports, options.owner);
  let accepted: SubmitResult | undefined;
  let failure: SubmitFailure | undefined;
  let mayHaveApplied = false;
  for (let resends = 0; !accepted; resends++) {
    // A process stopped or asleep since its lease was last written may have lost the row to another machine, which
    // then parked it as unknown, nothing sent; sending now could pay a second time for a step a person resubmits.
    // A renewal whose answer was itself held up is no proof either: renewed again until one answers in time.
    // Never skipped however fresh the lease: a person's cancel ends the row without touching the lease, and only this
    // fenced write (one row by its key) tells a worker stalled since the mark not to send what the cancel said it stopped.
    // A database briefly locked is waited out: nothing is sent until the check has answered.
    do if (!(await fresh.renew(async () => (await durably(() => repo.renewMarked(task.id, options.leaseMs, attempt()))) === true))) return notSent(resends);
    while (!fresh.surely());
    try {
      // Not cut when the run is asked to stop, only when the stop's grace runs out: cutting a request that has
      // left turns a known outcome into an unknown one.
      accepted = await provider.submit(request, { idempotencyKey: key, onRequestId: (id) => ids.heard(id), signal: options.stopping });
    } catch (err) {
      if (options.stopping?.aborted) return;
      failure = err instanceof SubmitError ? err.failure : { kind: 'maybe_applied', message: `unexpected error while sending: ${(err as Error).message}` };
      // The provider named the request: whatever went wrong after, it is addressable, never resent.
      if (ids.requestId !== null) break;
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
          await durably(() => repo.requeue(task.id, clock.now() + decision.delayMs, decision.reason, attempt()));
          return;
        case 'fail':
          await durably(() => repo.fail(task.id, decision.reason, 'no', attempt()));
          return;
        case 'unknown':
          await durably(() => repo.parkUnknown(task.id, decision.reason, attempt()));
          return;
      }
    }
  }
  stopPoint('after-send', task.id);

  const submitted = accepted ? await ids.record(accepted, signal) : await ids.settled(signal);
  if (submitted === 'stopped') return;
  // Paid bytes in hand exist nowhere else (a synchronous provider keeps no copy): saved whatever became of the row.
  if (accepted?.result) return keepInHand(submitted === 'elsewhere' ? marked : submitted, accepted.requestId, storableResult(accepted.result, marked.currency), ports, options, signal);
  if (submitted === 'elsewhere') return lost('recording the request id');
  stopPoint('after-record', task.id);
  if (!accepted) {
    const why = `the provider named the request (${ids.requestId}) but its answer did not arrive whole (${failure!.message})`;
    if (submitted.status === 'SUBMITTED') {
      ports.log(`task ${task.id}: ${why}; asking the provider for its outcome`);
      return pollAndFinish(submitted, ports, options, signal);
    }
    await durably(() => repo.parkUnknown(task.id, `${why}; the provider may have charged it, and it cannot be asked`, attempt()));
    return;
  }
  return pollAndFinish(submitted, ports, options, signal);
}

/**
 * Whether the lease written last is surely still this worker's: less than half of it has passed since that write
 * left, by the wall clock (which counts a system sleep) and the monotonic one (which no clock change moves). A
 * renewal counts from before it leaves too: a stall while its answer is on the way is time the lease may run out in.
 */
function leaseFreshness(clock: Clock, leaseMs: number) {
  let wall = clock.now();
  let mono = clock.monotonic();
  return {
    surely: () => Math.max(clock.now() - wall, clock.monotonic() - mono) < leaseMs / 2,
    async renew(write: () => Promise<boolean>): Promise<boolean> {
      const [leftWall, leftMono] = [clock.now(), clock.monotonic()];
      if (!(await write())) return false;
      [wall, mono] = [leftWall, leftMono];
      return true;
    },
  };
}

async function keepInHand(task: Task, requestId: string, result: ProviderResult, ports: ExecutorPorts, options: ExecutorOptions, signal: AbortSignal) {
  const rounds = { provider: titleOf(task.provider), policy: collectPolicy(options.poll), random: ports.random };
  const saved = await saveResult(task, result, requestId, ports, { owner: options.owner, collectLater: false, rounds }, signal);
  if (saved.state === 'saved') return completeFromDisk(task, saved.record, ports, options, signal, saved.unusable);
  if (saved.state === 'stopped') return;
  // An expiry already says it was paid and why it cannot be had; other failures say what went wrong with the bytes.
  const error = saved.state === 'gone' ? saved.message : `the paid result could not be kept: ${saved.message}`;
  await untilWritten(() => ports.repo.fail(task.id, error, 'yes', { owner: options.owner, now: ports.clock.now() }, result.costActual), ports, signal);
}

async function pollAndFinish(task: Task, ports: ExecutorPorts, options: ExecutorOptions, signal: AbortSignal) {
  const learned = (await options.durations?.(task.provider, task.model)) ?? null;
  const outcome = await pollUntilDone(task, ports, { ...options.poll, owner: options.owner, leaseMs: options.leaseMs, learned }, signal);
  const lease = () => ({ owner: options.owner, now: ports.clock.now() });
  const durably = <T>(write: () => Promise<T>) => untilWritten(write, ports, signal);
  // A text answer is kept in the history first (the database), so a crash before the end still leaves it.
  const answer = outcome.state === 'succeeded' ? outcome.result.answer : outcome.state === 'failed' ? outcome.answer : undefined;
  if (answer !== undefined) await durably(() => ports.repo.note(task.id, ANSWER_KEPT, { answer }, ports.clock.now()));
  switch (outcome.state) {
    case 'succeeded':
      return finish(task, outcome.result, ports, options, signal);
    case 'failed': {
      const failed = storableFailure(outcome, task.currency);
      await durably(() => ports.repo.fail(task.id, failed.error, failed.charged, lease(), failed.costActual));
      return;
    }
    case 'running':
      // Known to be still under way: looked at again slowly, without holding a slot, never parked as unknown.
      await durably(() =>
        ports.repo.retryLater(task.id, ports.clock.now() + SLOW_POLL_MS, `still running at the provider after ${minutes(outcome.forMs)}`, lease()),
      );
      return;
    case 'missing': {
      // The answer that named the files is gone, the files need not be (keptResult.ts): asked for before a round counts.
      const kept = keptResult(await historyOf(task, ports, signal), task.remoteRequestId);
      if (kept) return finish(task, kept, ports, options, signal);
      return collectAgain(task, outcome.missing, null, ports, options, signal);
    }
    case 'deadline': {
      // A request the provider said was complete (its files kept, or its result found missing since) is paid: never
      // unknown. Only an answer that nothing is there counts a round; no answer at all (an outage) is asked again later.
      const events = await historyOf(task, ports, signal);
      const kept = keptResult(events, task.remoteRequestId);
      if (kept) return finish(task, kept, ports, options, signal);
      const rounds = missingRounds(events);
      if (rounds.last && saysNothingIsThere(outcome.status)) {
        const gone = `${titleOf(task.provider)} said the request was complete, and now answers HTTP ${outcome.status} when asked about it`;
        return collectAgain(task, { ...rounds.last, message: gone }, rounds, ports, options, signal);
      }
      if (rounds.last) {
        const next = askAgainLater(titleOf(task.provider), outcome.problem, rounds, collectPolicy(options.poll), ports.random());
        ports.log(`task ${task.id}: ${next.note}`);
        await durably(() => ports.repo.retryLater(task.id, ports.clock.now() + next.delayMs, next.note, lease()));
        return;
      }
      await durably(() => ports.repo.parkUnknown(task.id, outcome.reason, lease(), 'SUBMITTED'));
      return;
    }
    case 'stopped':
      return;
  }
}

/**
 * The task's history, read as patiently as a write: a database that cannot be reached now (a team server
 * restarting) must not end the executor mid-collection and leave a paid result to wait out its lease.
 */
async function historyOf(task: Task, ports: ExecutorPorts, signal: AbortSignal) {
  return (await untilWritten(() => ports.repo.events(task.id), ports, signal)) ?? [];
}

/**
 * A result the provider said was complete, found missing once more (collectRetry.ts): collected again after a
 * backoff, without holding a slot, or at the last round ended as paid, with when and where it was found gone.
 */
async function collectAgain(task: Task, missing: MissingResult, known: MissingRounds | null, ports: ExecutorPorts, options: ExecutorOptions, signal: AbortSignal) {
  const { repo, clock } = ports;
  const lease = () => ({ owner: options.owner, now: clock.now() });
  const rounds = known ?? missingRounds(await historyOf(task, ports, signal));
  const next = collectRetry(titleOf(task.provider), missing, rounds, roundNow(clock), collectPolicy(options.poll), ports.random());
  ports.log(`task ${task.id}: ${next.action === 'expired' ? next.error : next.note}`);
  if (next.action === 'expired') await untilWritten(() => repo.fail(task.id, next.error, 'yes', lease()), ports, signal);
  else await untilWritten(() => repo.retryLater(task.id, clock.now() + next.delayMs, next.note, lease(), next.detail), ports, signal);
}

/** Saves every output of a result the provider still holds, then completes the row. */
async function finish(task: Task, reported: ProviderResult, ports: ExecutorPorts, options: ExecutorOptions, signal: AbortSignal) {
  const result = storableResult(reported, task.currency);
  const lease = () => ({ owner: options.owner, now: ports.clock.now() });
  const durably = <T>(write: () => Promise<T>) => untilWritten(write, ports, signal);
  const events = await historyOf(task, ports, signal);
  const rounds = missingRounds(events);
  // Kept before any download, so the files are still found after a crash or a sleep mid-download outlasts the answer.
  const keep = task.remoteRequestId && ports.provider.capabilities.filesOutliveResult ? keptDetail(task.remoteRequestId, result) : null;
  if (keep && !keptResult(events, task.remoteRequestId)) {
    const words = `the result is complete at ${titleOf(task.provider)}; its files are at ${keep.resultFiles.files.map((f) => f.url).join(', ')}`;
    await durably(() => ports.repo.note(task.id, words, keep, ports.clock.now()));
  }
  const expired = (missing: MissingResult) => {
    const next = collectRetry(titleOf(task.provider), missing, rounds, roundNow(ports.clock), collectPolicy(options.poll), 0);
    return next.action === 'expired' ? next.error : null;
  };
  const saved = await saveResult(task, result, task.remoteRequestId, ports, { owner: options.owner, collectLater: true, expired }, signal);
  switch (saved.state) {
    case 'saved':
      return completeFromDisk(task, saved.record, ports, options, signal, saved.unusable);
    case 'missing':
      return collectAgain(task, saved.missing, rounds, ports, options, signal);
    case 'later':
      await durably(() => ports.repo.retryLater(task.id, ports.clock.now() + SLOW_POLL_MS, saved.message, lease()));
      return;
    case 'gone':
    case 'unusable':
      await durably(() => ports.repo.fail(task.id, saved.message, 'yes', lease(), result.costActual));
      return;
    case 'stopped':
      return;
  }
}
