import type { Clock, OutputStore } from '../ports.ts';
import type { ProviderAdapter } from '../providers/port.ts';
import { KINDS, type Kind, type Task } from '../tasks/model.ts';
import type { TaskRepository } from '../tasks/repository.ts';
import { runRemoteTask } from './executor.ts';
import { runRenderTask } from './renderExecutor.ts';
import { Heartbeat } from './heartbeat.ts';
import { newOwner, processAlive, type OwnerIdentity, type OwnerRegistry } from './owners.ts';
import type { PollOptions } from './poller.ts';
import { recoveryFor } from './recovery.ts';
import { recoverExpired } from './recoverySweep.ts';
import { SleepDetector } from './sleepDetector.ts';

export interface EngineOptions {
  leaseMs: number;
  tickMs: number;
  concurrency: Record<Kind, number>;
  poll: PollOptions;
}

export const DEFAULT_ENGINE_OPTIONS: EngineOptions = {
  leaseMs: 30_000,
  tickMs: 500,
  concurrency: { image: 4, clip: 3, speech: 2, render: 1 },
  poll: { intervalMs: 1_000, maxIntervalMs: 10_000, deadlineMs: 30 * 60_000 },
};

export interface SupervisorDeps {
  repo: TaskRepository;
  owners: OwnerRegistry;
  providers: (id: string) => ProviderAdapter | undefined;
  clock: Clock;
  outputs: OutputStore;
  /** Where renders are written, and the ffmpeg and ffprobe that make and check them. */
  dataDir: string;
  media: { ffmpegPath: string; ffprobePath: string };
  random?: () => number;
  log?: (message: string) => void;
  owner?: OwnerIdentity;
}

/**
 * Claims work per kind, runs it, keeps its leases alive and recovers what others left behind.
 * One tick: notice a system sleep (and renew before judging anyone), recover expired rows, claim.
 */
export class Supervisor {
  readonly owner: OwnerIdentity;
  private readonly inFlight = new Map<number, { controller: AbortController; done: Promise<void> }>();
  private readonly heartbeat: Heartbeat;
  private readonly sleep: SleepDetector;
  private readonly log: (message: string) => void;
  private readonly random: () => number;
  private timer: NodeJS.Timeout | null = null;
  private stopping: Promise<void> | null = null;
  /** Until this wall time nobody else's lease is judged: after a sleep, every owner gets a beat to renew. */
  private graceUntil = 0;

  constructor(
    private readonly deps: SupervisorDeps,
    private readonly options: EngineOptions = DEFAULT_ENGINE_OPTIONS,
  ) {
    this.owner = deps.owner ?? newOwner();
    this.log = deps.log ?? (() => undefined);
    this.random = deps.random ?? Math.random;
    this.sleep = new SleepDetector(Math.max(2_000, options.leaseMs / 3));
    this.heartbeat = new Heartbeat(
      deps.repo,
      deps.clock,
      this.owner.id,
      options.leaseMs,
      () => [...this.inFlight.keys()],
      (ids) => this.abandon(ids),
    );
  }

  /** Registers this process and recovers, at once, the rows of owners on this machine that are gone. */
  start(): void {
    const { repo, owners, clock } = this.deps;
    const now = clock.now();
    owners.register(this.owner, now);
    const dead = owners
      .onHost(this.owner.hostname)
      .filter((o) => o.id !== this.owner.id && !processAlive(o.pid))
      .map((o) => o.id);
    if (dead.length > 0) {
      const n = repo.expireLeasesOf(dead, now);
      dead.forEach((id) => owners.remove(id));
      this.log(`recovering ${n} task(s) left by ${dead.length} stopped process(es)`);
    }
    this.heartbeat.start();
    this.tick();
    this.timer = setInterval(() => this.tick(), this.options.tickMs);
  }

  tick(): void {
    const { repo, clock } = this.deps;
    const slept = this.sleep.look(clock.now(), clock.monotonic());
    if (slept > 0) {
      this.log(`the system slept for ${Math.round(slept / 1000)} s; renewing leases before judging any`);
      this.heartbeat.beat();
      this.graceUntil = clock.now() + this.options.leaseMs;
    }
    const judging = clock.now() >= this.graceUntil;
    if (judging) recoverExpired(repo, clock.now(), new Set(this.inFlight.keys()), this.log);
    for (const kind of KINDS) {
      const limit = this.options.concurrency[kind];
      if (limit <= 0) continue;
      const claimed = repo.claim(kind, limit, this.options.leaseMs, { owner: this.owner.id, now: clock.now() }, judging);
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
            { repo, clock, log: this.log, dataDir: this.deps.dataDir, ...this.deps.media },
            { owner: this.owner.id, leaseMs: this.options.leaseMs },
            controller.signal,
          )
        : provider
          ? runRemoteTask(
              task,
              { repo, provider, clock, outputs: this.deps.outputs, random: this.random, log: this.log },
              { owner: this.owner.id, leaseMs: this.options.leaseMs, poll: this.options.poll },
              controller.signal,
            )
          : Promise.resolve(this.withoutProvider(task));
    const done = run
      .catch((err: Error) => this.log(`task ${task.id}: ${err.stack ?? err.message}`))
      .finally(() => {
        if (this.inFlight.get(task.id)?.controller !== controller) return;
        // Whatever the executor left unfinished goes back to recovery rather than being held forever.
        repo.expireLease(task.id, lease());
        this.inFlight.delete(task.id);
      });
    this.inFlight.set(task.id, { controller, done });
  }

  /** Fresh work fails at no cost; work that may have been paid for waits for a person, its request id kept. */
  private withoutProvider(task: Task): void {
    const lease = { owner: this.owner.id, now: this.deps.clock.now() };
    const why = `no provider called "${task.provider}" is set up`;
    if (recoveryFor(task).action === 'requeue') this.deps.repo.fail(task.id, why, 'no', lease);
    else this.deps.repo.parkUnknown(task.id, `${why}; set it up, then adopt the request id to collect the result`, lease);
  }

  /** Renews this process's leases now: the desktop app calls it when the system suspends or resumes. */
  renewNow(): void {
    this.heartbeat.beat();
    this.graceUntil = this.deps.clock.now() + this.options.leaseMs;
  }

  /** Whether a paid request of this process is under way (for keeping the machine awake). */
  paidWorkInFlight(): boolean {
    return [...this.inFlight.keys()].some((id) => this.deps.repo.get(id)?.kind !== 'render');
  }

  private abandon(ids: number[]): void {
    for (const id of ids) {
      this.log(`task ${id}: another worker holds it now; stopping here`);
      this.inFlight.get(id)?.controller.abort();
    }
  }

  /**
   * Stops claiming and stops polls (the rows stay addressable). A request being sent is let finish, so its
   * request id is saved; then this process's rows go to recovery. Safe to call more than once.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      if (this.timer) clearInterval(this.timer);
      this.timer = null;
      for (const { controller } of this.inFlight.values()) controller.abort();
      await Promise.all([...this.inFlight.values()].map((f) => f.done));
      this.heartbeat.stop();
      this.deps.owners.remove(this.owner.id);
    })();
    return this.stopping;
  }

  /** Runs until no work is left that can move without a person, or until stopped. */
  async runUntilIdle(): Promise<void> {
    this.start();
    while (!this.stopping && (this.inFlight.size > 0 || this.deps.repo.hasOutstandingWork())) {
      await this.deps.clock.sleep(this.options.tickMs);
    }
    await this.stop();
  }
}
