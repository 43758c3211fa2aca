/** The engine's workers: claims up to each kind's free slots, runs each claimed task once, and knows what is in flight. */
import { KINDS, type Task } from '../domain/tasks/model.ts';
import type { EngineOptions } from '../domain/engineOptions.ts';
import { learnDurations, type LearnedDurations } from './durations.ts';
import type { EngineTrouble } from './engineTrouble.ts';
import { runRemoteTask } from './executor.ts';
import type { EngineHealth } from './health.ts';
import type { OutputLocator } from './outputLocator.ts';
import { recoveryFor } from './recovery.ts';
import { runRenderTask } from './renderExecutor.ts';
import type { SupervisorDeps } from './supervisorDeps.ts';

/** How long a model's learned durations are used before they are read again. */
const DURATIONS_FOR_MS = 30_000;

export interface PoolParts {
  ownerId: string;
  files: OutputLocator;
  health: EngineHealth;
  random: () => number;
  log: (message: string) => void;
  trouble: EngineTrouble;
  /** Asks for a claim at once: a task finished, so a slot is free. */
  wake: () => void;
}

export class WorkerPool {
  private readonly inFlight = new Map<number, { controller: AbortController; done: Promise<void>; paid: boolean }>();
  /** Aborted when a stop's grace runs out, cutting sends that are still waiting. */
  private readonly cutSends = new AbortController();
  private readonly durations = new Map<string, { at: number; learned: LearnedDurations | null }>();

  constructor(
    private readonly deps: SupervisorDeps,
    private readonly options: EngineOptions,
    private readonly parts: PoolParts,
  ) {}

  /** The ids of the tasks this process is working on. */
  ids(): number[] {
    return [...this.inFlight.keys()];
  }

  get size(): number {
    return this.inFlight.size;
  }

  async claimFree(judging: boolean): Promise<void> {
    const { repo, clock } = this.deps;
    for (const kind of KINDS) {
      const limit = this.options.concurrency[kind];
      if (limit <= 0) continue;
      const claimed = await repo.claim(kind, limit, this.options.leaseMs, { owner: this.parts.ownerId, now: clock.now() }, judging);
      for (const task of claimed) this.dispatch(task);
    }
  }

  private dispatch(task: Task): void {
    // A row this process is still working on came back (requeued by another process after a stall, then
    // claimed here again): the executor already running it carries on, and no second one starts.
    if (this.inFlight.has(task.id)) return;
    const { repo, clock } = this.deps;
    const { ownerId, files, log, trouble } = this.parts;
    const controller = new AbortController();
    const provider = this.deps.providers(task.provider);
    const lease = () => ({ owner: ownerId, now: clock.now() });
    const run =
      task.kind === 'render'
        ? runRenderTask(
            task,
            { repo, clock, log, dataDir: this.deps.dataDir, media: files.media, ...this.deps.media },
            { owner: ownerId, leaseMs: this.options.leaseMs },
            controller.signal,
          )
        : provider
          ? runRemoteTask(
              task,
              { repo, provider, clock, outputs: this.deps.outputs, files, receipts: this.deps.receipts, health: this.parts.health, random: this.parts.random, log },
              {
                owner: ownerId,
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
      .catch((err: unknown) => trouble.trouble(err))
      .finally(async () => {
        if (this.inFlight.get(task.id)?.controller !== controller) return;
        // Whatever the executor left unfinished goes back to recovery rather than being held forever.
        await trouble.guarded(async () => void (await repo.expireLease(task.id, lease())));
        this.inFlight.delete(task.id);
        this.parts.wake();
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
      this.parts.trouble.trouble(err);
    }
    this.durations.set(key, { at: now, learned });
    return learned;
  }

  /** Fresh work fails at no cost; work that may have been paid for waits for a person, its request id kept. */
  private async withoutProvider(task: Task): Promise<void> {
    const lease = { owner: this.parts.ownerId, now: this.deps.clock.now() };
    const why = `no provider called "${task.provider}" is set up`;
    if (recoveryFor(task).action === 'requeue') await this.deps.repo.fail(task.id, why, 'no', lease);
    else await this.deps.repo.parkUnknown(task.id, `${why}; set it up, then adopt the request id to collect the result`, lease, task.status === 'SUBMITTED' ? 'SUBMITTED' : 'RUNNING');
  }

  /** Whether a paid request of this process is under way (for keeping the machine awake). */
  paidWorkInFlight(): boolean {
    return [...this.inFlight.values()].some((f) => f.paid);
  }

  abandon(ids: number[]): void {
    for (const id of ids) {
      this.parts.log(`task ${id}: another worker holds it now; stopping here`);
      this.inFlight.get(id)?.controller.abort();
    }
  }

  /** Stops every task's run (polls stop; a request being sent still waits for its answer until `cut`). */
  abortAll(): void {
    for (const { controller } of this.inFlight.values()) controller.abort();
  }

  /** Cuts the sends still waiting for their answer. */
  cut(): void {
    this.cutSends.abort();
  }

  /** Settles when every task's run under way now has. */
  settled(): Promise<unknown> {
    return Promise.all([...this.inFlight.values()].map((f) => f.done));
  }
}
