import { hostname } from 'node:os';
import { dataFolderMedia } from '../media/mediaFolder.ts';
import { OutputLocator } from './outputLocator.ts';
import { EngineHealth } from './health.ts';
import { Heartbeat } from './heartbeat.ts';
import { coalesced } from './coalesced.ts';
import { newOwner, type OwnerIdentity } from './owners.ts';
import { UnknownLookups } from './unknownLookups.ts';
import { DEFAULT_ENGINE_OPTIONS, DEFAULT_LOOKUP, type EngineOptions } from '../domain/engineOptions.ts';
import { EngineTrouble } from './engineTrouble.ts';
import { letGo, runUntilIdle } from './shutdown.ts';
import type { SupervisorDeps } from './supervisorDeps.ts';
import { Sweeps } from './sweeps.ts';
import { WorkerPool } from './workerPool.ts';

/** How often a paused engine tries the database again. */
const PAUSED_PROBE_MS = 5_000;

/**
 * While paused, a write waits this long for a lock instead of the usual busy timeout: every wait blocks this
 * process, and the host must stay free to say why the engine waits, and to stop at once.
 */
const PAUSED_BUSY_MS = 100;

/**
 * Claims work per kind, runs it, keeps its leases alive and recovers what others left behind.
 * One tick: notice a system sleep (and renew before judging anyone), recover expired rows, claim.
 */
export class Supervisor {
  readonly owner: OwnerIdentity;
  /** Claims made at once on a wake, awaited by stop before it lets go of what is in flight. */
  private readonly wakeClaims = new Set<Promise<unknown>>();
  /** One tick at a time: a tick asked for while one runs follows it. */
  private readonly ticks = coalesced(() => this.runTick());
  private readonly heartbeat: Heartbeat;
  private readonly log: (message: string) => void;
  readonly health: EngineHealth;
  private readonly trouble: EngineTrouble;
  private readonly lookups: UnknownLookups;
  private readonly pool: WorkerPool;
  private readonly sweeps: Sweeps;
  private timer: NodeJS.Timeout | null = null;
  private registered = false;
  private nextProbe = 0;
  private stopping: Promise<void> | null = null;
  private unsubscribe: (() => void) | null = null;
  /** A claim is already queued to run as soon as the current work yields. */
  private wakeQueued = false;

  constructor(
    private readonly deps: SupervisorDeps,
    private readonly options: EngineOptions = DEFAULT_ENGINE_OPTIONS,
  ) {
    this.owner = deps.owner ?? newOwner();
    this.log = deps.log ?? (() => undefined);
    const random = deps.random ?? Math.random;
    this.health = new EngineHealth(this.log, (paused) => deps.waitForLocks?.(paused ? PAUSED_BUSY_MS : undefined), deps.database);
    this.trouble = new EngineTrouble(this.health, deps.clock, this.log);
    const files = deps.files ?? new OutputLocator(deps.repo, dataFolderMedia(deps.dataDir, hostname()));
    this.lookups = new UnknownLookups({ repo: deps.repo, providers: deps.providers, files, clock: deps.clock, log: this.log }, options.lookup ?? DEFAULT_LOOKUP);
    const { health, log, trouble } = this;
    this.pool = new WorkerPool(deps, options, { ownerId: this.owner.id, files, health, random, log, trouble, wake: () => this.wake() });
    this.heartbeat = new Heartbeat(
      deps.repo,
      deps.clock,
      this.owner.id,
      options.leaseMs,
      () => (this.probing() ? this.pool.ids() : []),
      (ids) => this.pool.abandon(ids),
      (err) => this.trouble.trouble(err),
    );
    this.sweeps = new Sweeps(deps, options, { owner: this.owner, log, trouble, heartbeat: this.heartbeat, lookups: this.lookups, inFlight: () => this.pool.ids() });
  }

  /**
   * While the database cannot be written, each try blocks this process for the busy timeout: the engine then
   * tries only every few seconds, so the host stays responsive to say why it waits.
   */
  private probing(): boolean {
    if (!this.health.paused) return true;
    const now = this.deps.clock.monotonic();
    if (now < this.nextProbe) return false;
    this.nextProbe = now + PAUSED_PROBE_MS;
    return true;
  }

  /**
   * Starts the engine: registers this process, replays the request ids journaled by processes that could not
   * write them, recovers at once the rows of owners on this machine that are gone, then claims; and keeps doing
   * so every tick. Settles when that first tick is done; it never rejects (trouble pauses the engine instead).
   */
  start(): Promise<void> {
    this.heartbeat.start();
    this.timer = setInterval(() => void this.tick(), this.options.tickMs);
    this.unsubscribe = this.deps.repo.onClaimable(() => this.wake());
    return this.tick();
  }

  /**
   * Claims at once, without waiting for the tick, when work of this process finished or became claimable:
   * a dependent starts as soon as what it needs succeeded, and a free slot is filled. Many wakes in one turn
   * make one claim. Work enqueued by another process is still found by the tick.
   */
  private wake(): void {
    if (this.wakeQueued || !this.timer) return;
    this.wakeQueued = true;
    setImmediate(() => {
      this.wakeQueued = false;
      if (!this.timer || this.health.paused || !this.registered) return;
      // Rows whose lease ran out are left to the tick, whose recovery sweep judges them first.
      const claim: Promise<unknown> = this.trouble.guarded(() => this.pool.claimFree(false)).finally(() => this.wakeClaims.delete(claim));
      this.wakeClaims.add(claim);
    });
  }

  private async register(): Promise<void> {
    await this.sweeps.register();
    this.registered = true;
  }

  /** One tick (see the class); a tick asked for while one runs follows it. Never rejects. */
  tick(): Promise<void> {
    return this.ticks();
  }

  private async runTick(): Promise<void> {
    if (this.stopping) return;
    // Writes would go to a file nobody will read again: nothing new is claimed until the studio is restarted.
    const moved = this.deps.databaseMoved?.();
    if (moved) return this.health.hold(moved, this.deps.clock.now());
    if (!this.probing()) return;
    if (!this.registered && !(await this.trouble.guarded(() => this.register()))) return;
    if (await this.trouble.guarded(() => this.claimAndRecover())) this.health.clear();
  }

  private async claimAndRecover(): Promise<void> {
    const judging = await this.sweeps.sweep();
    await this.pool.claimFree(judging);
  }

  /** Renews this process's leases now: the desktop app calls it when the system suspends or resumes. */
  renewNow(): void {
    void this.heartbeat.beat();
    this.sweeps.renewed();
  }

  /** Whether a paid request of this process is under way (for keeping the machine awake). */
  paidWorkInFlight(): boolean {
    return this.pool.paidWorkInFlight();
  }

  /**
   * Stops claiming and stops polls (the rows stay addressable). A request being sent is given a few seconds to
   * answer, so its request id is saved, then cut; this process's rows go to recovery. Safe to call more than once.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      if (this.timer) clearInterval(this.timer);
      this.timer = null;
      this.unsubscribe?.();
      const { lookups, ticks, wakeClaims, pool, trouble, heartbeat } = this;
      await letGo({ lookups, ticks, wakeClaims, pool, trouble, heartbeat, leave: () => trouble.guarded(() => this.deps.owners.remove(this.owner.id)) });
    })();
    return this.stopping;
  }

  /** Runs until no work is left that can move without a person, or until stopped. */
  runUntilIdle(): Promise<void> {
    const { health, lookups, trouble, log } = this;
    return runUntilIdle({
      start: () => this.start(),
      stop: () => this.stop(),
      stopping: () => this.stopping !== null,
      running: () => this.pool.size,
      health,
      repo: this.deps.repo,
      clock: this.deps.clock,
      tickMs: this.options.tickMs,
      lookups,
      trouble,
      log,
    });
  }
}
