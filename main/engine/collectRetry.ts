import { monotonicRun } from './bootIdentity.ts';
import type { Clock } from '../domain/ports.ts';
import type { TaskEvent } from '../domain/tasks/model.ts';
import { backoffDelay } from '../domain/backoff.ts';
import { MISSING_FOR_MS } from '../domain/engineOptions.ts';

/** The fewest rounds of collecting a result found missing before it is called expired. */
export const COLLECT_TRIES = 5;

/** The longest wait between two rounds, so a file back after a passing fault is collected soon after. */
const ROUND_MAX_MS = 10 * 60_000;

const roundWait = (policy: CollectPolicy, round: number, random: number) =>
  backoffDelay({ baseMs: policy.baseMs, factor: 2, maxMs: ROUND_MAX_MS, jitter: 0.25 }, round, random);

/** How rounds are timed: the first wait (doubling from there), and how long a result must stay missing. */
export interface CollectPolicy {
  baseMs: number;
  missingForMs: number;
}

/** An address of a completed result that answered that nothing is there. */
export interface MissingResult {
  url: string;
  status: number;
  message: string;
}

/**
 * When a round ran: the wall clock, and the monotonic clock of the process that ran it, with `run` naming that
 * process in its boot (a monotonic reading means something only beside another of the same process). Null for rounds
 * recorded before they kept it.
 */
export interface RoundTime {
  wall: number;
  mono: number | null;
  run: string | null;
}

/** Now, as a round records it. */
export function roundNow(clock: Clock): RoundTime {
  return { wall: clock.now(), mono: clock.monotonic(), run: monotonicRun() };
}

/** The latest round, and the wait it set before the next. */
interface RoundMark extends RoundTime {
  waitMs: number;
}

/**
 * The rounds that found the result missing so far: how many counted, when the first one did (for the words), how
 * long they span by the measure of `passedBetween`, what the last found, and when it ran.
 */
export interface MissingRounds {
  count: number;
  firstAt: number | null;
  spanMs: number;
  last: { url: string; status: number } | null;
  mark: RoundMark | null;
}

export type CollectRetry =
  | { action: 'later'; delayMs: number; note: string; rounds: MissingRounds; detail: { resultMissing: RoundDetail } }
  /** Paid for, and gone at the provider: `error` says so, with since when it was found gone and where. */
  | { action: 'expired'; error: string };

/** What a round leaves in the task's history, so the next one, in any process, can count it. */
interface RoundDetail {
  url: string;
  status: number;
  since: number;
  at: number;
  mono: number | null;
  run: string | null;
  waitMs: number;
}

export const NO_ROUNDS: MissingRounds = { count: 0, firstAt: null, spanMs: 0, last: null, mark: null };

/**
 * Time passed between two rounds. In one process, by its monotonic clock, which no step of the wall clock moves (a
 * clock set forward two hours must not make a result missing for seconds look missing for hours). Across a restart
 * only the wall clock can say, and a clock set back never makes time run backwards.
 */
export function passedBetween(before: RoundTime, after: RoundTime): number {
  if (before.run !== null && before.run === after.run && before.mono !== null && after.mono !== null) return Math.max(0, after.mono - before.mono);
  return Math.max(0, after.wall - before.wall);
}

/**
 * This round added to the earlier ones. It counts as a try only when at least half the wait set before it has passed:
 * rounds that come due together (after a long stop of the process, or a clock step that made every wait look over)
 * are one look, not many.
 */
function withRound(earlier: MissingRounds, found: { url: string; status: number }, here: RoundTime, waitMs: number): MissingRounds {
  const passed = earlier.mark ? passedBetween(earlier.mark, here) : 0;
  const counts = !earlier.mark || passed >= earlier.mark.waitMs / 2;
  return {
    count: earlier.count + (counts ? 1 : 0),
    firstAt: earlier.firstAt ?? here.wall,
    spanMs: earlier.spanMs + passed,
    last: { url: found.url, status: found.status },
    mark: { ...here, waitMs },
  };
}

/** Counted from the task's history since a person last acted on it, as each round leaves an event that says so. */
export function missingRounds(events: readonly TaskEvent[]): MissingRounds {
  let rounds = NO_ROUNDS;
  for (const e of events) {
    const found = (e.detail as { resultMissing?: Partial<RoundDetail> & { url: string; status: number } } | null)?.resultMissing;
    if (e.actor === 'person') rounds = NO_ROUNDS;
    else if (found) {
      const here = { wall: found.at ?? e.at, mono: found.mono ?? null, run: found.run ?? null };
      const firstAt = rounds.firstAt ?? found.since ?? here.wall;
      rounds = { ...withRound(rounds, found, here, found.waitMs ?? 0), firstAt };
    }
  }
  return rounds;
}

function span(ms: number): string {
  return ms >= 120_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`;
}

/**
 * What becomes of a task whose completed result was found missing once more, at `here`: asked again after a backoff
 * that starts at `policy.baseMs` and doubles, or, once COLLECT_TRIES rounds have counted over at least
 * `policy.missingForMs` (measured as `passedBetween` says), ended as paid and expired at `provider` (its name as a
 * person knows it). The words say since when the studio found it gone, not when the provider removed it, which no
 * answer tells.
 */
export function collectRetry(provider: string, missing: MissingResult, earlier: MissingRounds, here: RoundTime, policy: CollectPolicy, random: number): CollectRetry {
  const counted = withRound(earlier, missing, here, 0);
  const tries = counted.count;
  const since = new Date(counted.firstAt!).toISOString();
  if (tries >= COLLECT_TRIES && counted.spanMs >= policy.missingForMs) {
    return {
      action: 'expired',
      error:
        `paid; the result expired at ${provider}: it was found gone there since ${since} (${missing.url} answered HTTP ${missing.status}) ` +
        `and still was after ${tries} tries until ${new Date(here.wall).toISOString()}; ${provider} said the request was complete, so it cannot be collected`,
    };
  }
  const delayMs = roundWait(policy, tries, random);
  const rounds = { ...counted, mark: { ...here, waitMs: delayMs } };
  return {
    action: 'later',
    delayMs,
    rounds,
    note:
      `${missing.message} (${missing.url}); found missing since ${since}, asking again (try ${tries}; it is called expired only ` +
      `when still missing after ${COLLECT_TRIES} tries over ${span(policy.missingForMs)})`,
    detail: { resultMissing: { url: missing.url, status: missing.status, since: counted.firstAt!, at: here.wall, mono: here.mono, run: here.run, waitMs: delayMs } },
  };
}

/**
 * A result the provider said was complete, which could not be asked about this time (no answer, or not one that says
 * nothing is there): paid, so never unknown, and asked again after the wait the next round would have, no round counted.
 */
export function askAgainLater(provider: string, problem: string, rounds: MissingRounds, policy: CollectPolicy, random: number): { delayMs: number; note: string } {
  return {
    delayMs: roundWait(policy, Math.max(1, rounds.count), random),
    note: `${provider} said the request was complete, but could not be asked for its result now (${problem}); it is paid, and asked again shortly`,
  };
}

/** The rounds' timing from the poll settings: waits start at the longest wait between polls. */
export function collectPolicy(poll: { maxIntervalMs: number; missingForMs?: number }): CollectPolicy {
  return { baseMs: poll.maxIntervalMs, missingForMs: poll.missingForMs ?? MISSING_FOR_MS };
}
