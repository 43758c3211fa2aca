import { hostname } from 'node:os';
import { dataFolderMedia } from '../media/mediaFolder.ts';
import { OutputLocator } from './outputLocator.ts';
import type { Clock, OutputStore, ReceiptLog } from '../domain/ports.ts';
import type { ProviderAdapter } from '../providers/port.ts';
import { KINDS, type Task } from '../domain/tasks/model.ts';
import type { OwnerStore, Store, TaskStore } from '../store/port.ts';
import { runRemoteTask } from './executor.ts';
import { runRenderTask } from './renderExecutor.ts';
import type { OwnPrices } from './estimator.ts';
import { databaseUnavailable, EngineHealth } from './health.ts';
import { Heartbeat } from './heartbeat.ts';
import { cancelLateRequest } from './lateCancel.ts';
import { clockWarning } from './clockOffset.ts';
import { coalesced } from './coalesced.ts';
import { replayReceipts, settleReceipts } from './receiptReplay.ts';
import { newOwner, processAlive, type OwnerIdentity } from './owners.ts';
import { recoveryFor } from './recovery.ts';
import { recoverExpired } from './recoverySweep.ts';
import { SleepDetector } from './sleepDetector.ts';
import { UnknownLookups } from './unknownLookups.ts';
import { DEFAULT_ENGINE_OPTIONS, DEFAULT_LOOKUP, type EngineOptions } from '../domain/engineOptions.ts';
import { learnDurations, type LearnedDurations } from './durations.ts';

/** How long a stop lets a request being sent wait for its answer (and so its request id) before cutting it. */
const STOP_GRACE_MS = 3_000;

/** How often a paused engine tries the database again. */
const PAUSED_PROBE_MS = 5_000;

/**
 * While paused, a write waits this long for a lock instead of the usual busy timeout: every wait blocks this
 * process, and the host must stay free to say why the engine waits, and to stop at once.
 */
const PAUSED_BUSY_MS = 100;

/** How long a model's learned durations are used before they are read again. */
const DURATIONS_FOR_MS = 30_000;

/** How often journal files whose receipts are all in the table are dropped. */
const SETTLE_EVERY_MS = 60_000;

/** How often this machine's clock is measured again against the team database's (a clock may be set meanwhile). */
const CLOCK_CHECK_MS = 60_000;

export interface SupervisorDeps {
  repo: TaskStore;
  owners: OwnerStore;
  /** Runs writes that belong together (a recovery sweep, a replay of receipts) as one transaction. */
  transaction: Store['transaction'];
  providers: (id: string) => ProviderAdapter | undefined;
  clock: Clock;
  outputs: OutputStore;
  receipts: ReceiptLog;
  /** Why the database file this process opened is no longer the one at its path (deleted, replaced), or null. */
  databaseMoved?: () => string | null;
  /** The database as a person knows it, in what is said when it cannot be used ("the team database at …"). */
  database?: string;
  /** The database's own id (Store.databaseId): in every idempotency key and receipt of its tasks. */
  databaseId: string;
  /** How long a write waits for another program's lock (none given: the usual wait); shortened while paused. */
  waitForLocks?: (ms?: number) => void;
  /** Where renders are written, and the ffmpeg and ffprobe that make and check them. */
  dataDir: string;
  /** Where saved results are found, and renders saved: the data folder's when not given (no media folder). */
  files?: OutputLocator;
  media: { ffmpegPath: string; ffprobePath: string };
  random?: () => number;
  log?: (message: string) => void;
  owner?: OwnerIdentity;
  /** Prices the person set for models with no documented one (settings "prices"). */
  prices?: () => OwnPrices;
  /** Measures this machine's clock against the team database's, kept on the owner's row; the clock follows it. */
  checkClock?: (owner: string) => Promise<number | null>;
}

/**
 * Claims work per kind, runs it, keeps its leases alive and recovers what others left behind.
 * One tick: notice a system sleep (and renew before judging anyone), recover expired rows, claim.
 */
export class Supervisor {
  readonly owner: OwnerIdentity;
  private readonly inFlight = new Map<number, { controller: AbortController; done: Promise<void>; paid: boolean }>();
  /** Aborted when a stop's grace runs out, cutting sends that are still waiting. */
  private readonly cutSends = new AbortController();
  /** Work outside any task's run (cancelling a late request, lookups), awaited by stop. */
  private readonly background = new Set<Promise<void>>();
  /** Claims made at once on a wake, awaited by stop before it lets go of what is in flight. */
  private readonly wakeClaims = new Set<Promise<unknown>>();
  /** One tick at a time: a tick asked for while one runs follows it. */
  private readonly ticks = coalesced(() => this.runTick());
  private readonly heartbeat: Heartbeat;
  private readonly sleep: SleepDetector;
  private readonly log: (message: string) => void;
  private readonly random: () => number;
  readonly health: EngineHealth;
  private readonly lookups: UnknownLookups;
  private readonly files: OutputLocator;
  private timer: NodeJS.Timeout | null = null;
  private registered = false;
  private nextProbe = 0;
  private lastSettle = 0;
  private nextClockCheck = 0;
  private stopping: Promise<void> | null = null;
  /**
   * Until this monotonic time nobody else's lease is judged: after a sleep, every owner gets a beat to renew. Not
   * the wall clock's: a grace set while it read wrong would otherwise last as long as it was wrong.
   */
  private graceUntil = 0;
  private unsubscribe: (() => void) | null = null;
  private readonly durations = new Map<string, { at: number; learned: LearnedDurations | null }>();
  /** A claim is already queued to run as soon as the current work yields. */
  private wakeQueued = false;

  constructor(
    private readonly deps: SupervisorDeps,
    private readonly options: EngineOptions = DEFAULT_ENGINE_OPTIONS,
  ) {
    this.owner = deps.owner ?? newOwner();
    this.log = deps.log ?? (() => undefined);
    this.random = deps.random ?? Math.random;
    this.health = new EngineHealth(this.log, (paused) => deps.waitForLocks?.(paused ? PAUSED_BUSY_MS : undefined), deps.database);
    this.files = deps.files ?? new OutputLocator(deps.repo, dataFolderMedia(deps.dataDir, hostname()));
    this.lookups = new UnknownLookups({ repo: deps.repo, providers: deps.providers, files: this.files, clock: deps.clock, log: this.log }, options.lookup ?? DEFAULT_LOOKUP);
    this.sleep = new SleepDetector(Math.max(2_000, options.leaseMs / 3));
    this.heartbeat = new Heartbeat(
      deps.repo,
      deps.clock,
      this.owner.id,
      options.leaseMs,
      () => (this.probing() ? [...this.inFlight.keys()] : []),
      (ids) => this.abandon(ids),
      (err) => this.trouble(err),
    );
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
   * A timer or promise of the engine met an error: a database that cannot be written pauses the engine
   * (it says why and resumes by itself); anything else is logged. Nothing is thrown out of the process.
   */
  private trouble(err: unknown): void {
    if (databaseUnavailable(err)) this.health.blocked(err, this.deps.clock.now());
    else this.log(`engine error: ${(err as Error)?.stack ?? String(err)}`);
  }

  /** Runs a step of the engine's own, never rejecting: what goes wrong is the engine's trouble. */
  private async guarded(step: () => Promise<void>): Promise<boolean> {
    try {
      await step();
      return true;
    } catch (err) {
      this.trouble(err);
      return false;
    }
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
      const claim: Promise<unknown> = this.guarded(() => this.claimFree(false)).finally(() => this.wakeClaims.delete(claim));
      this.wakeClaims.add(claim);
    });
  }

  private async register(): Promise<void> {
    const { repo, owners, clock } = this.deps;
    const now = clock.now();
    await owners.register(this.owner, now);
    await this.checkClock(true);
    // By the machine's id and boot, not its name: a pid means nothing on another computer that goes by the same name
    // or started from a copy of this data folder. Without a boot to match, no pid is judged: leases run out instead.
    const { machine, boot } = this.owner;
    const mine = boot === null ? [] : await owners.onMachine(machine, boot);
    const dead = mine.filter((o) => o.id !== this.owner.id && !processAlive(o.pid)).map((o) => o.id);
    if (dead.length > 0) {
      const n = await repo.expireLeasesOf(dead, now);
      for (const id of dead) await owners.remove(id);
      this.log(`recovering ${n} task(s) left by ${dead.length} stopped process(es)`);
    }
    try {
      await this.replayReceipts();
    } catch (err) {
      // A database that cannot be written is retried with the registration; a bad receipt stops nothing else.
      if (databaseUnavailable(err)) throw err;
      this.trouble(err);
    }
    this.registered = true;
  }

  /** Measures this machine's clock against the team database's; at start, one far off is said, with what to do. */
  private async checkClock(atStart: boolean): Promise<void> {
    if (!this.deps.checkClock) return;
    this.nextClockCheck = this.deps.clock.monotonic() + CLOCK_CHECK_MS;
    const offset = await this.deps.checkClock(this.owner.id);
    const warning = atStart && offset !== null ? clockWarning(offset) : null;
    if (warning) this.log(warning);
  }

  /** Journaled request ids go into the table; a task cancelled meanwhile has its request cancelled at the provider. */
  private async replayReceipts(): Promise<void> {
    const { repo, receipts, clock } = this.deps;
    for (const { receipt, task } of await replayReceipts(this.deps, receipts, (p) => this.pollable(p), clock.now())) {
      this.log(`task ${task.id}: recorded request ${receipt.requestId} from the receipt journal`);
      if (task.status !== 'CANCELLED') continue;
      this.inBackground(cancelLateRequest(repo, this.deps.providers(task.provider), task, receipt.requestId, () => clock.now()));
    }
    await this.followAfterCancels();
    this.lastSettle = clock.now();
  }

  /** Requests named after their task's cancel that a process which died left unfollowed (see unfollowedAfterCancel). */
  private async followAfterCancels(): Promise<void> {
    const { repo, clock } = this.deps;
    for (const task of await repo.unfollowedAfterCancel()) {
      this.log(`task ${task.id}: request ${task.remoteRequestId} was named after its cancel and left unfollowed; following it`);
      this.inBackground(cancelLateRequest(repo, this.deps.providers(task.provider), task, task.remoteRequestId!, () => clock.now()));
    }
  }

  /** Work off the path of any task's run, awaited by stop; what goes wrong in it is the engine's trouble. */
  private inBackground(work: Promise<void>): void {
    const running: Promise<void> = work.catch((err: unknown) => this.trouble(err)).finally(() => this.background.delete(running));
    this.background.add(running);
  }

  private pollable(provider: string): boolean {
    return this.deps.providers(provider)?.capabilities.pollById ?? false;
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
    if (!this.registered && !(await this.guarded(() => this.register()))) return;
    if (await this.guarded(() => this.claimAndRecover())) this.health.clear();
  }

  private async claimAndRecover(): Promise<void> {
    const { repo, clock } = this.deps;
    // A clock stepped or asleep since it was measured is measured at once, before it is used to judge anyone:
    // then only a sleep, not a step of this machine's clock, shows below as time passed on the database's clock.
    if (clock.monotonic() >= this.nextClockCheck || clock.settled?.() === false) await this.checkClock(false);
    const slept = this.sleep.look(clock.now(), clock.monotonic());
    if (slept > 0) {
      this.log(`the system slept for ${Math.round(slept / 1000)} s; renewing leases before judging any`);
      await this.heartbeat.beat();
      this.graceUntil = clock.monotonic() + this.options.leaseMs;
    }
    const judging = clock.monotonic() >= this.graceUntil && clock.settled?.() !== false;
    if (judging) {
      await recoverExpired(
        {
          repo,
          transaction: this.deps.transaction,
          receipts: this.deps.receipts,
          hasResult: (t) => this.deps.outputs.has(t),
          pollable: (t) => this.pollable(t.provider),
        },
        clock.now(),
        new Set(this.inFlight.keys()),
        this.log,
      );
    }
    // Off the path of any task's run: a bounded pass in the background, awaited by stop.
    const lookups = this.lookups.tick();
    if (lookups) this.inBackground(lookups);
    if (clock.now() - this.lastSettle > SETTLE_EVERY_MS) {
      await settleReceipts(repo, this.deps.receipts);
      await this.followAfterCancels();
      this.lastSettle = clock.now();
    }
    await this.claimFree(judging);
  }

  private async claimFree(judging: boolean): Promise<void> {
    const { repo, clock } = this.deps;
    for (const kind of KINDS) {
      const limit = this.options.concurrency[kind];
      if (limit <= 0) continue;
      const claimed = await repo.claim(kind, limit, this.options.leaseMs, { owner: this.owner.id, now: clock.now() }, judging);
      for (const task of claimed) this.dispatch(task);
    }
  }

  private dispatch(task: Task): void {
    // A row this process is still working on came back (requeued by another process after a stall, then
    // claimed here again): the executor already running it carries on, and no second one starts.
    if (this.inFlight.has(task.id)) return;
    const { repo, clock } = this.deps;
    const controller = new AbortController();
    const provider = this.deps.providers(task.provider);
    const lease = () => ({ owner: this.owner.id, now: clock.now() });
    const run =
      task.kind === 'render'
        ? runRenderTask(
            task,
            { repo, clock, log: this.log, dataDir: this.deps.dataDir, media: this.files.media, ...this.deps.media },
            { owner: this.owner.id, leaseMs: this.options.leaseMs },
            controller.signal,
          )
        : provider
          ? runRemoteTask(
              task,
              { repo, provider, clock, outputs: this.deps.outputs, files: this.files, receipts: this.deps.receipts, health: this.health, random: this.random, log: this.log },
              {
                owner: this.owner.id,
                database: this.deps.databaseId,
                leaseMs: this.options.leaseMs,
                poll: this.options.poll,
                stopping: this.cutSends.signal,
                prices: this.deps.prices,
                durations: (p, m) => this.learned(p, m),
              },
              controller.signal,
            )
          : Promise.resolve().then(() => this.withoutProvider(task));
    const done = run
      .catch((err: unknown) => this.trouble(err))
      .finally(async () => {
        if (this.inFlight.get(task.id)?.controller !== controller) return;
        // Whatever the executor left unfinished goes back to recovery rather than being held forever.
        await this.guarded(async () => void (await repo.expireLease(task.id, lease())));
        this.inFlight.delete(task.id);
        this.wake();
      });
    this.inFlight.set(task.id, { controller, done, paid: task.kind !== 'render' });
  }

  /** This model's past durations here, read again every so often. */
  private async learned(provider: string, model: string): Promise<LearnedDurations | null> {
    const key = `${provider}\u0000${model}`;
    const now = this.deps.clock.monotonic();
    const known = this.durations.get(key);
    // Until enough are known, each new one counts: read again at every request.
    if (known?.learned && now - known.at < DURATIONS_FOR_MS) return known.learned;
    let learned: LearnedDurations | null = null;
    try {
      learned = learnDurations(await this.deps.repo.recentDurations(provider, model));
    } catch (err) {
      this.trouble(err);
    }
    this.durations.set(key, { at: now, learned });
    return learned;
  }

  /** Fresh work fails at no cost; work that may have been paid for waits for a person, its request id kept. */
  private async withoutProvider(task: Task): Promise<void> {
    const lease = { owner: this.owner.id, now: this.deps.clock.now() };
    const why = `no provider called "${task.provider}" is set up`;
    if (recoveryFor(task).action === 'requeue') await this.deps.repo.fail(task.id, why, 'no', lease);
    else await this.deps.repo.parkUnknown(task.id, `${why}; set it up, then adopt the request id to collect the result`, lease, task.status === 'SUBMITTED' ? 'SUBMITTED' : 'RUNNING');
  }

  /** Renews this process's leases now: the desktop app calls it when the system suspends or resumes. */
  renewNow(): void {
    void this.heartbeat.beat();
    this.graceUntil = this.deps.clock.monotonic() + this.options.leaseMs;
  }

  /** Whether a paid request of this process is under way (for keeping the machine awake). */
  paidWorkInFlight(): boolean {
    return [...this.inFlight.values()].some((f) => f.paid);
  }

  private abandon(ids: number[]): void {
    for (const id of ids) {
      this.log(`task ${id}: another worker holds it now; stopping here`);
      this.inFlight.get(id)?.controller.abort();
    }
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
      this.lookups.stop();
      // A claim under way may still start work; it is let go of with the rest.
      await this.ticks.idle();
      await Promise.all(this.wakeClaims);
      for (const { controller } of this.inFlight.values()) controller.abort();
      const grace = setTimeout(() => this.cutSends.abort(), STOP_GRACE_MS);
      await Promise.all([...this.inFlight.values()].map((f) => f.done));
      await Promise.all(this.background);
      clearTimeout(grace);
      await this.heartbeat.stop();
      await this.guarded(() => this.deps.owners.remove(this.owner.id));
    })();
    return this.stopping;
  }

  /** Runs until no work is left that can move without a person, or until stopped. */
  async runUntilIdle(): Promise<void> {
    await this.start();
    do {
      // Once the database moved away, nothing more is claimed here: what is left is for the studio started from its new place.
      while (!this.stopping && (this.inFlight.size > 0 || (!this.health.held && (await this.outstanding())))) {
        await this.deps.clock.sleep(this.options.tickMs);
      }
      // Before it ends, each unknown outcome is looked up once, due or not: what is adopted is collected here
      // rather than left for the next run, which might be a minute or a week away.
    } while (!this.stopping && !this.health.held && (await this.settleLookups()) > 0);
    if (this.health.held) this.log(`stopping: ${this.health.held}`);
    await this.stop();
  }

  /** One lookup of each unknown outcome still looked for; how many it adopted (0 when it could not run). */
  private async settleLookups(): Promise<number> {
    let adopted = 0;
    await this.guarded(async () => {
      adopted = await this.lookups.settle();
    });
    return adopted;
  }

  /** Whether work is left; while the database cannot be read, what it holds is unknown, so work is taken to be left. */
  private async outstanding(): Promise<boolean> {
    try {
      return await this.deps.repo.hasOutstandingWork();
    } catch (err) {
      if (!databaseUnavailable(err)) throw err;
      this.trouble(err);
      return true;
    }
  }
}
