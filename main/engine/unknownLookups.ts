import type { InputFiles } from '../media/outputLocator.ts';
import type { Clock } from '../ports.ts';
import type { ProviderAdapter } from '../providers/port.ts';
import type { Task, TaskEvent } from '../tasks/model.ts';
import type { TaskStore } from '../store/port.ts';
import { lookupVerdict, SKEW_MS } from './lookupVerdict.ts';
import { lookUp } from './reconciler.ts';

export interface LookupOptions {
  /** Time from the parking, then between lookups of one task. */
  intervalMs: number;
  /** Lookups that find nothing before the person is asked. */
  tries: number;
}

/**
 * Ten lookups, thirty seconds apart: five minutes in which a queued request has time to start and end, for a
 * provider whose listing may show a request only then (fal's).
 */
export const DEFAULT_LOOKUP: LookupOptions = { intervalMs: 30_000, tries: 10 };

/** Tasks looked up per pass, one after another, so a backlog of unknowns never floods a provider. */
const PER_PASS = 8;

/** How often the engine asks the database whether a lookup is due. */
const CHECK_EVERY_MS = 1_000;

export interface LookupPorts {
  repo: Pick<TaskStore, 'get' | 'events' | 'requestIdsInUse' | 'unknownProviders' | 'dueForLookup' | 'lookupNoted' | 'sameInputOverlapping' | 'adoptFound'>;
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

type Lookable = ProviderAdapter & Required<Pick<ProviderAdapter, 'lookup'>>;

const lookable = (p: ProviderAdapter | undefined): p is Lookable => !!p?.capabilities.lookup && typeof p.lookup === 'function';

/**
 * Looks for the requests of unknown outcomes at providers that can list them, off the path of any task's run:
 * at most one pass at a time, of a few tasks, each due on its own schedule kept in its history (so a restarted
 * worker carries on). A lookup that finds exactly the request sent adopts it; one that finds nothing is made
 * again until the tries run out; anything less than certain is left to the person, saying why.
 */
export class UnknownLookups {
  private running = false;
  private nextCheck = 0;
  private readonly stopped = new AbortController();

  constructor(
    private readonly ports: LookupPorts,
    private readonly options: LookupOptions = DEFAULT_LOOKUP,
  ) {}

  /**
   * Starts a pass when a check is due and no pass is running: it asks the database what is due, then looks
   * each of those up. The promise, for a stop to wait on, settles when the pass ends; null when none starts.
   */
  tick(): Promise<void> | null {
    const now = this.ports.clock.now();
    if (this.running || this.stopped.signal.aborted || now < this.nextCheck) return null;
    this.nextCheck = now + Math.min(CHECK_EVERY_MS, this.options.intervalMs);
    this.running = true;
    return (async () => {
      try {
        const providers = (await this.ports.repo.unknownProviders()).filter((id) => lookable(this.ports.providers(id)));
        if (providers.length === 0) return;
        const due = await this.ports.repo.dueForLookup(providers, this.options.tries, this.options.intervalMs, now, PER_PASS);
        for (const { task, tries } of due) {
          if (this.stopped.signal.aborted) return;
          await this.lookFor(task, tries + 1);
        }
      } finally {
        this.running = false;
      }
    })();
  }

  stop(): void {
    this.stopped.abort();
  }

  private async lookFor(task: Task, n: number): Promise<void> {
    const { repo, clock, log } = this.ports;
    const provider = this.ports.providers(task.provider) as Lookable;
    const last = n >= this.options.tries;
    let facts;
    try {
      facts = await lookUp(repo, this.ports.files, provider, task, clock.now(), this.stopped.signal);
    } catch (err) {
      if (this.stopped.signal.aborted) return;
      const why = `the lookup at ${task.provider} failed (${(err as Error).message}); lookup ${n} of ${this.options.tries}`;
      await repo.lookupNoted(task.id, task.idempotencyKey, last ? `${why}; it needs your decision` : why, { lookup: n, verdict: last ? 'ask' : 'again' }, clock.now());
      return;
    }
    const { window } = facts;
    const verdict = lookupVerdict({
      ...facts,
      sameInputOverlapping: await repo.sameInputOverlapping(task, window.from - SKEW_MS, window.to + SKEW_MS),
      earlierAttempts: earlierParkings(await repo.events(task.id), task.idempotencyKey).filter((at) => at >= window.from - SKEW_MS),
      tries: n,
      maxTries: this.options.tries,
    });
    // The history keeps the requests that could have been this one (a few), and how many were listed in all.
    const close = facts.found
      .filter((c) => c.inputMatches || c.inputGone)
      .slice(0, 10)
      .map((c) => ({ id: c.requestId, createdAt: new Date(c.createdAt).toISOString(), status: c.status, inputMatches: c.inputMatches, taken: c.taken }));
    if (verdict.action === 'adopt') {
      const match = facts.found.find((c) => c.requestId === verdict.requestId)!;
      const evidence = {
        lookups: n,
        sendWindow: { from: new Date(window.from).toISOString(), to: new Date(window.to).toISOString() },
        found: { id: match.requestId, createdAt: new Date(match.createdAt).toISOString(), status: match.status },
        listed: facts.found.length,
      };
      if (await repo.adoptFound(task.id, task.idempotencyKey, verdict.requestId, verdict.why, evidence, clock.now())) {
        log(`task ${task.id}: adopted request ${verdict.requestId} found at ${task.provider} (${verdict.why})`);
      }
      return;
    }
    const reason = `looked for the request at ${task.provider}: ${verdict.why}${verdict.action === 'ask' ? '; it needs your decision' : ''}`;
    await repo.lookupNoted(task.id, task.idempotencyKey, reason, { lookup: n, verdict: verdict.action, listed: facts.found.length, close }, clock.now());
    if (verdict.action === 'ask') log(`task ${task.id}: ${reason}`);
  }
}
