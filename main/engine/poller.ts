import type { Clock } from '../ports.ts';
import { PollError, ResultGone, type ReportedCost, type ProviderAdapter, type ProviderResult } from '../providers/port.ts';
import type { Charged, Task } from '../tasks/model.ts';
import type { TaskRepository } from '../tasks/repository.ts';
import { stopPoint } from './stopPoints.ts';

export interface PollOptions {
  intervalMs: number;
  maxIntervalMs: number;
  /** Measured from the moment the provider accepted the request. */
  deadlineMs: number;
}

export type PollOutcome =
  | { state: 'succeeded'; result: ProviderResult }
  | { state: 'failed'; error: string; costActual: ReportedCost | null; charged: Charged }
  /** Past the deadline and the provider says it is still working on it: known, so never unknown. */
  | { state: 'running'; forMs: number }
  | { state: 'deadline'; reason: string }
  | { state: 'stopped' };

interface PollPorts {
  repo: Pick<TaskRepository, 'saveProgress'>;
  provider: Pick<ProviderAdapter, 'poll'>;
  clock: Clock;
  random: () => number;
  log: (message: string) => void;
}

/** After the deadline, a poll that gets no answer at all is tried this many times before giving up. */
export const FINAL_POLL_TRIES = 3;

/** Wall time racing this far ahead of monotonic time between two polls means the machine slept. */
const SLEEP_THRESHOLD_MS = 2_000;

function duration(ms: number): string {
  return ms >= 120_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`;
}

/**
 * Polls a submitted request until it ends, saving progress (and so renewing the lease) on the row.
 * A transient poll error is only a reason to poll again later: a GET costs nothing. When the deadline
 * passes, one fresh answer decides (a passing error does not count as one): a request the provider says
 * is still running is handed back to be looked at slowly; only a provider that cannot be asked at all
 * makes the outcome unknown, never a failure. Sleep while polling does not count against the deadline.
 */
export async function pollUntilDone(
  task: Task,
  ports: PollPorts,
  options: PollOptions & { owner: string; leaseMs: number },
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
  let interval = options.intervalMs;
  let unanswered = 0;

  const gaveUp = (problem: string): PollOutcome => ({
    state: 'deadline',
    reason: `no result within the poll deadline (${duration(options.deadlineMs)}): ${problem}; it may still finish and be charged`,
  });

  for (;;) {
    if (signal.aborted) return { state: 'stopped' };
    const late = clock.now() >= deadline;
    const overdue = clock.now() >= overdueAt;
    try {
      const answer = await ports.provider.poll(remote, signal);
      if (answer.state !== 'pending') return answer;
      const lease = { owner: options.owner, now: clock.now() };
      if (!ports.repo.saveProgress(task.id, answer.progress, options.leaseMs, lease)) {
        ports.log(`task ${task.id}: lease lost while polling; stopping`);
        return { state: 'stopped' };
      }
      stopPoint('mid-poll', task.id);
      if (overdue) return { state: 'running', forMs: clock.now() - submittedAt };
    } catch (err) {
      if (signal.aborted) return { state: 'stopped' };
      if (err instanceof ResultGone) return { state: 'failed', error: err.message, costActual: null, charged: 'yes' };
      if (late && ++unanswered >= FINAL_POLL_TRIES) return gaveUp(`the provider could not be asked (${(err as Error).message})`);
      if (err instanceof PollError && err.retryAfterMs) interval = Math.max(interval, err.retryAfterMs);
    }
    const wait = late ? interval : Math.min(interval, Math.max(0, deadline - clock.now()));
    try {
      await clock.sleep(Math.round(wait * (0.8 + 0.4 * ports.random())), signal);
    } catch {
      return { state: 'stopped' };
    }
    interval = Math.min(options.maxIntervalMs, interval * 1.5);
    const slept = clock.now() - wall - (clock.monotonic() - mono);
    if (slept > SLEEP_THRESHOLD_MS) {
      deadline += slept;
      overdueAt += slept;
    }
    wall = clock.now();
    mono = clock.monotonic();
  }
}
