import type { Clock } from '../domain/ports.ts';
import type { PollOptions } from '../domain/engineOptions.ts';
import { PollError, ResultGone, ResultMissing, type PollResult, type ReportedCost, type ProviderAdapter, type ProviderResult } from '../providers/port.ts';
import type { Charged, Task } from '../domain/tasks/model.ts';
import type { TaskStore } from '../store/port.ts';
import type { MissingResult } from './collectRetry.ts';
import type { LearnedDurations } from './durations.ts';
import { nextPollDelay } from './pollSchedule.ts';
import { stopPoint } from './stopPoints.ts';

/** The shortest gap between two looks at one request (a smaller configured interval stands). */
export const MIN_POLL_GAP_MS = 250;

/** A status stream that stayed open this long is opened again after it closes; one that closed sooner is not. */
const STREAM_REOPEN_MS = 30_000;

/** Progress heard on a status stream is saved (renewing the lease) at most this often. */
const STREAM_SAVE_EVERY_MS = 1_000;

export type PollOutcome =
  | { state: 'succeeded'; result: ProviderResult }
  | { state: 'failed'; error: string; costActual: ReportedCost | null; charged: Charged; answer?: string }
  /** Past the deadline and the provider says it is still working on it: known, so never unknown. */
  | { state: 'running'; forMs: number }
  /** `problem` and `status` (the HTTP status, when an answer came) are of the last look that got no usable answer. */
  | { state: 'deadline'; reason: string; problem: string; status: number | null }
  /** The provider said the request was complete, yet its result answered that nothing is there. */
  | { state: 'missing'; missing: MissingResult }
  | { state: 'stopped' };

interface PollPorts {
  repo: Pick<TaskStore, 'saveProgress'>;
  provider: Pick<ProviderAdapter, 'poll' | 'watch'>;
  clock: Clock;
  random: () => number;
  log: (message: string) => void;
}

/** After the deadline, a poll that gets no answer at all is tried this many times before giving up. */
export const FINAL_POLL_TRIES = 3;

/** Wall time racing this far ahead of monotonic time between two polls means the machine slept. */
const SLEEP_THRESHOLD_MS = 2_000;

function missingOf(err: ResultMissing): PollOutcome {
  return { state: 'missing', missing: { url: err.url, status: err.status!, message: err.message } };
}

function duration(ms: number): string {
  return ms >= 120_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`;
}

/**
 * Follows a submitted request until it ends, saving progress (and so renewing the lease) on the row: on the
 * provider's status stream where it has one, else (and whenever the stream fails or closes early) by polling
 * on a schedule learned from this model's past durations (pollSchedule.ts).
 * A transient poll error is only a reason to poll again later: a GET costs nothing. When the deadline
 * passes, one fresh answer decides (a passing error does not count as one): a request the provider says
 * is still running is handed back to be looked at slowly; only a provider that cannot be asked at all
 * makes the outcome unknown, never a failure. Sleep while polling does not count against the deadline.
 */
export async function pollUntilDone(
  task: Task,
  ports: PollPorts,
  options: PollOptions & { owner: string; leaseMs: number; learned?: LearnedDurations | null },
  signal: AbortSignal,
): Promise<PollOutcome> {
  const { clock } = ports;
  const remote = { requestId: task.remoteRequestId!, model: task.model, handle: task.remoteHandle };
  // The deadline counts from the submit, but a poll that starts late (after a restart, an adoption) still
  // gets a fair look before silence counts, and time the machine spends asleep while polling is not counted.
  const submittedAt = task.submittedAt ?? clock.now();
  let overdueAt = submittedAt + options.deadlineMs;
  let deadline = Math.max(overdueAt, clock.now() + options.deadlineMs / 4);
  let wall = clock.now();
  let mono = clock.monotonic();
  let interval = 0;
  let retryAfter: number | undefined;
  let unanswered = 0;
  let streaming = ports.provider.watch !== undefined;
  const minMs = Math.min(options.intervalMs, MIN_POLL_GAP_MS);

  /** Time the machine spent asleep since the last look is not counted against the deadline. */
  const noteSleep = () => {
    const slept = clock.now() - wall - (clock.monotonic() - mono);
    if (slept > SLEEP_THRESHOLD_MS) {
      deadline += slept;
      overdueAt += slept;
    }
    wall = clock.now();
    mono = clock.monotonic();
  };

  /**
   * Follows the status stream until the request ends, the stream closes or fails, or the deadline comes (then
   * polls decide). Returns the outcome, or null to poll now; `streaming` says whether to open it again later.
   */
  const follow = async (): Promise<PollOutcome | null> => {
    const opened = clock.monotonic();
    const local = new AbortController();
    const timer = setTimeout(() => local.abort(), Math.min(2 ** 31 - 1, Math.max(0, deadline - clock.now())));
    let saved = -Infinity;
    let lost = false;
    /** The save under way, if any: one at a time, and the stream's outcome waits for it. */
    let saving: Promise<void> | null = null;
    const save = async (progress: number | null) => {
      try {
        if (await ports.repo.saveProgress(task.id, progress, options.leaseMs, { owner: options.owner, now: clock.now() })) return stopPoint('mid-poll', task.id);
      } catch {
        // The heartbeat renews the lease on its own timer, and the next save tries again.
        return;
      }
      lost = true;
      local.abort();
    };
    const heard = (progress: number | null) => {
      const at = clock.monotonic();
      if (saving || at - saved < STREAM_SAVE_EVERY_MS) return;
      saved = at;
      saving = save(progress).finally(() => (saving = null));
    };
    let answer: PollResult | null = null;
    try {
      answer = await ports.provider.watch!(remote, heard, AbortSignal.any([signal, local.signal]));
    } catch (err) {
      if (err instanceof ResultGone) return { state: 'failed', error: err.message, costActual: null, charged: 'yes' };
      if (err instanceof ResultMissing) return missingOf(err);
      if (!signal.aborted && !local.signal.aborted) ports.log(`task ${task.id}: status stream: ${(err as Error).message}; polling instead`);
      if (err instanceof PollError) retryAfter = err.retryAfterMs;
    } finally {
      clearTimeout(timer);
      await saving;
    }
    if (signal.aborted) return { state: 'stopped' };
    if (lost) {
      ports.log(`task ${task.id}: lease lost while following its status; stopping`);
      return { state: 'stopped' };
    }
    streaming = clock.monotonic() - opened >= STREAM_REOPEN_MS;
    noteSleep();
    return answer && answer.state !== 'pending' ? answer : null;
  };

  const gaveUp = (err: Error): PollOutcome => ({
    state: 'deadline',
    reason: `no result within the poll deadline (${duration(options.deadlineMs)}): the provider could not be asked (${err.message}); it may still finish and be charged`,
    problem: err.message,
    status: err instanceof PollError ? (err.status ?? null) : null,
  });

  for (;;) {
    if (signal.aborted) return { state: 'stopped' };
    if (streaming && clock.now() < deadline) {
      const ended = await follow();
      if (ended) return ended;
      // A stream refused with Retry-After (a 429) is not followed by a poll sooner than the provider asked.
      if (retryAfter) {
        try {
          await clock.sleep(Math.min(retryAfter, Math.max(0, deadline - clock.now())), signal);
        } catch {
          return { state: 'stopped' };
        }
        retryAfter = undefined;
        noteSleep();
      }
    }
    const late = clock.now() >= deadline;
    const overdue = clock.now() >= overdueAt;
    try {
      const answer = await ports.provider.poll(remote, signal);
      if (answer.state !== 'pending') return answer;
      const lease = { owner: options.owner, now: clock.now() };
      if (!(await ports.repo.saveProgress(task.id, answer.progress, options.leaseMs, lease))) {
        ports.log(`task ${task.id}: lease lost while polling; stopping`);
        return { state: 'stopped' };
      }
      stopPoint('mid-poll', task.id);
      if (overdue) return { state: 'running', forMs: clock.now() - submittedAt };
    } catch (err) {
      if (signal.aborted) return { state: 'stopped' };
      if (err instanceof ResultGone) return { state: 'failed', error: err.message, costActual: null, charged: 'yes' };
      // Asked again in rounds that back off (collectRetry.ts), not within this one: an expired result stays expired.
      if (err instanceof ResultMissing) return missingOf(err);
      if (late && ++unanswered >= FINAL_POLL_TRIES) return gaveUp(err as Error);
      if (err instanceof PollError && err.retryAfterMs) retryAfter = err.retryAfterMs;
    }
    if (streaming && !late) continue;
    interval = nextPollDelay({
      elapsedMs: clock.now() - submittedAt,
      learned: options.learned ?? null,
      previousMs: interval,
      firstMs: options.intervalMs,
      minMs,
      maxMs: options.maxIntervalMs,
      retryAfterMs: retryAfter,
    });
    retryAfter = undefined;
    const wait = late ? interval : Math.min(interval, Math.max(0, deadline - clock.now()));
    try {
      // A little jitter, so many requests accepted together are not asked about in step.
      await clock.sleep(Math.round(wait * (0.9 + 0.2 * ports.random())), signal);
    } catch {
      return { state: 'stopped' };
    }
    noteSleep();
  }
}
