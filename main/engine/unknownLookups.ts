import type { InputFiles } from './outputLocator.ts';
import type { Clock } from '../domain/ports.ts';
import type { ProviderAdapter } from '../providers/port.ts';
import type { Task, TaskEvent } from '../domain/tasks/model.ts';
import type { TaskStore } from '../store/port.ts';
import { DEFAULT_LOOKUP, DEFAULT_QUEUE_MS, type LookupOptions } from '../domain/engineOptions.ts';
import { failedLookupVerdict, lookupVerdict, SKEW_MS } from './lookupVerdict.ts';
import { cancelLateRequest } from './lateCancel.ts';
import { LookupFailed, lookUp } from './reconciler.ts';

/** Tasks looked up per pass, one after another, so a backlog of unknowns never floods a provider. */
const PER_PASS = 8;

/** How often the engine asks the database whether a lookup is due. */
const CHECK_EVERY_MS = 1_000;

/**
 * The verdict, not a count, ends the lookups of a task: past its tries, a request the listing could not show
 * yet is still looked for, until it could.
 */
const NO_LIMIT = Number.MAX_SAFE_INTEGER;

/** Unknown outcomes looked up by a run about to end, at most. */
const SETTLE_AT_MOST = 500;

export interface LookupPorts {
  repo: Pick<
    TaskStore,
    | 'get' | 'list' | 'events' | 'requestIdsInUse' | 'recentDurations' | 'unendedBefore' | 'unknownProviders' | 'dueForLookup' | 'lookupNoted'
    | 'sameInputOverlapping' | 'adoptFound' | 'foundAfterCancel' | 'note' | 'followAfterCancel' | 'settleFollow'
  >;
  providers: (id: string) => ProviderAdapter | undefined;
  /** Where the results a looked-up task was made from are, to rebuild the request it sent. */
  files: InputFiles;
  clock: Clock;
  log: (message: string) => void;
}

/** When this task's earlier attempts were parked as unknown: events before the one that started the attempt `attempt`. */
function earlierParkings(events: TaskEvent[], attempt: string | null): number[] {
  let started = events.length;
  while (started > 0 && (events[started - 1]!.detail as { idempotencyKey?: unknown } | null)?.idempotencyKey !== attempt) started--;
  return events.slice(0, Math.max(0, started - 1)).filter((e) => e.toStatus === 'OUTCOME_UNKNOWN' && e.fromStatus !== 'OUTCOME_UNKNOWN').map((e) => e.at);
}

/** The lookups made since the task was parked, as TaskStore.dueForLookup counts them, and whether one asked the person. */
function lookupsOf(events: TaskEvent[], task: Task): { tries: number; asked: boolean } {
  const since = events.filter((e) => e.at >= (task.finishedAt ?? 0)).map((e) => e.detail as { lookup?: unknown; verdict?: unknown } | null);
  return { tries: since.filter((d) => d?.lookup !== undefined && d.lookup !== null).length, asked: since.some((d) => d?.verdict === 'ask') };
}

type Lookable = ProviderAdapter & Required<Pick<ProviderAdapter, 'lookup'>>;

const lookable = (p: ProviderAdapter | undefined): p is Lookable => !!p?.capabilities.lookup && typeof p.lookup === 'function';

/** A task cancelled while its request was being sent, whose request may have left and be charged (see TaskStore.dueForLookup). */
const cancelledWhileSending = (t: Task) => t.status === 'CANCELLED' && t.submitStartedAt !== null && t.charged === 'maybe' && t.idempotencyKey !== null;

/**
 * Looks for the requests of unknown outcomes at providers that can list them, off the path of any task's run:
 * at most one pass at a time, of a few tasks, each due on its own schedule kept in its history (so a restarted
 * worker carries on). A lookup that finds exactly the request sent adopts it; one that finds nothing is made
 * again until the tries run out; anything less than certain is left to the person, saying why.
 */
export class UnknownLookups {
  private running: Promise<void> | null = null;
  private nextCheck = 0;
  private readonly stopped = new AbortController();
  /** Tasks a settling pass has looked up already: each once. */
  private readonly settled = new Set<number>();

  constructor(
    private readonly ports: LookupPorts,
    private readonly options: LookupOptions = DEFAULT_LOOKUP,
  ) {}

  /**
   * Starts a pass when a check is due and no pass is running: it takes from the database one due lookup at a
   * time and makes it, a few in all. Taking one moves the task's next lookup an interval on for every process and
   * machine (see TaskStore.dueForLookup), so each is taken just before it is made, never a batch whose last ones
   * would wait their turn while the interval runs out. The promise, for a stop to wait on, settles when the pass
   * ends; null when none starts.
   */
  tick(): Promise<void> | null {
    // By the monotonic clock: a check due by a wall clock that read wrong would wait as long as it was wrong.
    const now = this.ports.clock.monotonic();
    if (this.running || this.stopped.signal.aborted || now < this.nextCheck) return null;
    // A clock stepped since it was measured would write the next lookup's schedule as far off as it reads wrong.
    if (this.ports.clock.settled?.() === false) return null;
    this.nextCheck = now + Math.min(CHECK_EVERY_MS, this.options.intervalMs);
    return this.exclusively(async () => {
      const providers = (await this.ports.repo.unknownProviders()).filter((id) => lookable(this.ports.providers(id)));
      if (providers.length === 0) return;
      for (let n = 0; n < PER_PASS && !this.stopped.signal.aborted; n++) {
        const [due] = await this.ports.repo.dueForLookup(providers, NO_LIMIT, this.options.intervalMs, this.ports.clock.now(), 1);
        if (!due) return;
        await this.lookFor(due.task, due.tries + 1);
      }
    });
  }

  /**
   * For a run about to end: one lookup now of every unknown outcome still being looked for, due by the interval
   * or not, each once, after any pass under way. What it adopts goes on to be collected; the rest keeps its
   * schedule for the next run. Resolves to how many it adopted.
   */
  async settle(): Promise<number> {
    while (this.running) await this.running;
    let adopted = 0;
    await this.exclusively(async () => {
      // Read, not taken from the schedule: a lookup made here moves nobody's next one, due or not.
      const unknown = [...(await this.ports.repo.list({ status: 'OUTCOME_UNKNOWN' })), ...(await this.ports.repo.list({ status: 'CANCELLED' })).filter(cancelledWhileSending)]
        .filter((t) => t.remoteRequestId === null && lookable(this.ports.providers(t.provider)) && !this.settled.has(t.id))
        .slice(0, SETTLE_AT_MOST);
      for (const task of unknown) {
        if (this.stopped.signal.aborted) return;
        this.settled.add(task.id);
        const made = lookupsOf(await this.ports.repo.events(task.id), task);
        if (made.asked) continue;
        if (await this.lookFor(task, made.tries + 1)) adopted++;
      }
    });
    return adopted;
  }

  /** One pass at a time; the promise settles when it ends. */
  private exclusively(pass: () => Promise<void>): Promise<void> {
    const running = pass().finally(() => {
      this.running = null;
    });
    this.running = running;
    return running;
  }

  stop(): void {
    this.stopped.abort();
  }

  /** Looks for one task's request; true when it adopted it. */
  private async lookFor(task: Task, n: number): Promise<boolean> {
    const { repo, clock, log } = this.ports;
    const provider = this.ports.providers(task.provider) as Lookable;
    const last = n >= this.options.tries;
    // Read before the listing is asked for: what it shows is as of then, however late its answer is read.
    const now = clock.now();
    const settled = clock.settled?.() !== false;
    let facts;
    try {
      facts = await lookUp(repo, this.ports.files, provider, task, now, this.options.queueMs ?? DEFAULT_QUEUE_MS, this.stopped.signal);
    } catch (err) {
      if (this.stopped.signal.aborted) return false;
      const listedBy = err instanceof LookupFailed ? err.listedBy : null;
      const verdict = failedLookupVerdict(n, this.options.tries, listedBy, now);
      const still = verdict === 'again' && last ? `; it could still be queued or running until ${new Date(listedBy!).toISOString()}, so it is looked for again` : '';
      const why = `${(err as Error).message}; lookup ${n} of ${this.options.tries}${still}`;
      await repo.lookupNoted(task.id, task.idempotencyKey, verdict === 'ask' ? `${why}; it needs your decision` : why, { lookup: n, verdict, ...(still ? { listedBy } : {}) }, clock.now());
      return false;
    }
    const { window } = facts;
    const verdict = lookupVerdict({
      ...facts,
      sameInputOverlapping: await repo.sameInputOverlapping(task, window.from - SKEW_MS, window.to + SKEW_MS),
      earlierAttempts: earlierParkings(await repo.events(task.id), task.idempotencyKey).filter((at) => at >= window.from - SKEW_MS),
      tries: n,
      maxTries: this.options.tries,
      now,
      clockSettled: settled,
    });
    // The history keeps the requests that could have been this one (a few), and how many were listed in all.
    const close = facts.found
      .filter((c) => c.inputMatches || c.inputGone)
      .slice(0, 10)
      .map((c) => ({ id: c.requestId, createdAt: new Date(c.createdAt).toISOString(), status: c.status, inputMatches: c.inputMatches, taken: c.taken }));
    const cancelled = task.status === 'CANCELLED';
    if (verdict.action === 'adopt') {
      const match = facts.found.find((c) => c.requestId === verdict.requestId)!;
      const evidence = {
        lookups: n,
        sendWindow: { from: new Date(window.from).toISOString(), to: new Date(window.to).toISOString() },
        found: { id: match.requestId, createdAt: new Date(match.createdAt).toISOString(), status: match.status },
        listed: facts.found.length,
      };
      if (cancelled) {
        // Sent before the cancel reached its worker, which stopped before the provider named it: treated as any request
        // named after the cancel, stopped at the provider where it can be, else followed and collected.
        const found = await repo.foundAfterCancel(task.id, task.idempotencyKey, verdict.requestId, verdict.why, evidence, clock.now(), match.aliases);
        if (!found) return false;
        log(`task ${task.id}: found request ${verdict.requestId} at ${task.provider}, sent before the cancel (${verdict.why})`);
        await cancelLateRequest(repo, provider, found, verdict.requestId, () => clock.now());
        return true;
      }
      if (await repo.adoptFound(task.id, task.idempotencyKey, verdict.requestId, verdict.why, evidence, clock.now(), match.aliases)) {
        log(`task ${task.id}: adopted request ${verdict.requestId} found at ${task.provider} (${verdict.why})`);
        return true;
      }
      return false;
    }
    // A cancelled task needs no decision: it stays cancelled, possibly charged, and its history says where it was looked for.
    const ending = verdict.action !== 'ask' ? '' : cancelled ? '; the task stays cancelled, possibly charged' : '; it needs your decision';
    const reason = `looked for the request${cancelled ? ' sent before the cancel' : ''} at ${task.provider}: ${verdict.why}${ending}`;
    await repo.lookupNoted(task.id, task.idempotencyKey, reason, { lookup: n, verdict: verdict.action, listed: facts.found.length, close }, clock.now());
    if (verdict.action === 'ask') log(`task ${task.id}: ${reason}`);
    return false;
  }
}
