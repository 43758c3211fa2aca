/** How the engine winds down: letting go of its work on stop, and a run that stops once no work can move without a person. */
import type { Clock } from '../domain/ports.ts';
import type { TaskStore } from '../store/port.ts';
import type { EngineTrouble } from './engineTrouble.ts';
import { databaseUnavailable, type EngineHealth } from './health.ts';
import type { Heartbeat } from './heartbeat.ts';
import type { UnknownLookups } from './unknownLookups.ts';
import type { WorkerPool } from './workerPool.ts';

/** How long a stop lets a request being sent wait for its answer (and so its request id) before cutting it. */
const STOP_GRACE_MS = 3_000;

export interface LetGoParts {
  lookups: UnknownLookups;
  /** The tick under way, if any. */
  ticks: { idle(): Promise<void> };
  /** Claims made at once on a wake. */
  wakeClaims: ReadonlySet<Promise<unknown>>;
  pool: WorkerPool;
  trouble: EngineTrouble;
  heartbeat: Heartbeat;
  /** Removes this process from the owners. */
  leave: () => Promise<unknown>;
}

/**
 * Stops polls (the rows stay addressable); a request being sent is given a few seconds to answer, so its
 * request id is saved, then cut; this process's rows go to recovery.
 */
export async function letGo({ lookups, ticks, wakeClaims, pool, trouble, heartbeat, leave }: LetGoParts): Promise<void> {
  lookups.stop();
  // A claim under way may still start work; it is let go of with the rest.
  await ticks.idle();
  await Promise.all(wakeClaims);
  pool.abortAll();
  const grace = setTimeout(() => pool.cut(), STOP_GRACE_MS);
  await pool.settled();
  await trouble.settled();
  clearTimeout(grace);
  await heartbeat.stop();
  await leave();
}

export interface IdleParts {
  start: () => Promise<void>;
  stop: () => Promise<void>;
  stopping: () => boolean;
  /** How many tasks this process is running. */
  running: () => number;
  health: EngineHealth;
  repo: TaskStore;
  clock: Clock;
  tickMs: number;
  lookups: UnknownLookups;
  trouble: EngineTrouble;
  log: (message: string) => void;
}

/** Runs until no work is left that can move without a person, or until stopped. */
export async function runUntilIdle(p: IdleParts): Promise<void> {
  await p.start();
  do {
    // Once the database moved away, nothing more is claimed here: what is left is for the studio started from its new place.
    while (!p.stopping() && (p.running() > 0 || (!p.health.held && (await outstanding(p))))) {
      await p.clock.sleep(p.tickMs);
    }
    // Before it ends, each unknown outcome is looked up once, due or not: what is adopted is collected here
    // rather than left for the next run, which might be a minute or a week away.
  } while (!p.stopping() && !p.health.held && (await settleLookups(p)) > 0);
  if (p.health.held) p.log(`stopping: ${p.health.held}`);
  await p.stop();
}

/** One lookup of each unknown outcome still looked for; how many it adopted (0 when it could not run). */
async function settleLookups({ lookups, trouble }: IdleParts): Promise<number> {
  let adopted = 0;
  await trouble.guarded(async () => {
    adopted = await lookups.settle();
  });
  return adopted;
}

/** Whether work is left; while the database cannot be read, what it holds is unknown, so work is taken to be left. */
async function outstanding({ repo, trouble }: IdleParts): Promise<boolean> {
  try {
    return await repo.hasOutstandingWork();
  } catch (err) {
    if (!databaseUnavailable(err)) throw err;
    trouble.trouble(err);
    return true;
  }
}
