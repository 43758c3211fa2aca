/** The engine's sweeps: at start, what stopped processes left and journaled receipts; each tick, sleeps, expired leases, lookups and receipts. */
import type { EngineOptions } from '../domain/engineOptions.ts';
import { clockWarning } from './clockOffset.ts';
import type { EngineTrouble } from './engineTrouble.ts';
import { databaseUnavailable } from './health.ts';
import type { Heartbeat } from './heartbeat.ts';
import { cancelLateRequest } from './lateCancel.ts';
import { processAlive, type OwnerIdentity } from './owners.ts';
import { replayReceipts, settleReceipts } from './receiptReplay.ts';
import { recoverExpired } from './recoverySweep.ts';
import { SleepDetector } from './sleepDetector.ts';
import type { SupervisorDeps } from './supervisorDeps.ts';
import type { UnknownLookups } from './unknownLookups.ts';

/** How often journal files whose receipts are all in the table are dropped. */
const SETTLE_EVERY_MS = 60_000;

/** How often this machine's clock is measured again against the team database's (a clock may be set meanwhile). */
const CLOCK_CHECK_MS = 60_000;

export interface SweepParts {
  owner: OwnerIdentity;
  log: (message: string) => void;
  trouble: EngineTrouble;
  heartbeat: Heartbeat;
  lookups: UnknownLookups;
  /** The ids of the tasks this process is working on: never judged as left behind. */
  inFlight: () => number[];
}

export class Sweeps {
  private readonly sleep: SleepDetector;
  private lastSettle = 0;
  private nextClockCheck = 0;
  /**
   * Until this monotonic time nobody else's lease is judged: after a sleep, every owner gets a beat to renew. Not
   * the wall clock's: a grace set while it read wrong would otherwise last as long as it was wrong.
   */
  private graceUntil = 0;

  constructor(
    private readonly deps: SupervisorDeps,
    private readonly options: EngineOptions,
    private readonly parts: SweepParts,
  ) {
    this.sleep = new SleepDetector(Math.max(2_000, options.leaseMs / 3));
  }

  /** Registers this process, recovers at once the rows of owners on this machine that are gone, and replays receipts. */
  async register(): Promise<void> {
    const { repo, owners, clock } = this.deps;
    const { owner, log } = this.parts;
    const now = clock.now();
    await owners.register(owner, now);
    await this.checkClock(true);
    // By the machine's id and boot, not its name: a pid means nothing on another computer that goes by the same name
    // or started from a copy of this data folder. Without a boot to match, no pid is judged: leases run out instead.
    const { machine, boot } = owner;
    const mine = boot === null ? [] : await owners.onMachine(machine, boot);
    const dead = mine.filter((o) => o.id !== owner.id && !processAlive(o.pid)).map((o) => o.id);
    if (dead.length > 0) {
      const n = await repo.expireLeasesOf(dead, now);
      for (const id of dead) await owners.remove(id);
      log(`recovering ${n} task(s) left by ${dead.length} stopped process(es)`);
    }
    try {
      await this.replayReceipts();
    } catch (err) {
      // A database that cannot be written is retried with the registration; a bad receipt stops nothing else.
      if (databaseUnavailable(err)) throw err;
      this.parts.trouble.trouble(err);
    }
  }

  /** Measures this machine's clock against the team database's; at start, one far off is said, with what to do. */
  private async checkClock(atStart: boolean): Promise<void> {
    if (!this.deps.checkClock) return;
    this.nextClockCheck = this.deps.clock.monotonic() + CLOCK_CHECK_MS;
    const offset = await this.deps.checkClock(this.parts.owner.id);
    const warning = atStart && offset !== null ? clockWarning(offset) : null;
    if (warning) this.parts.log(warning);
  }

  /** Journaled request ids go into the table; a task cancelled meanwhile has its request cancelled at the provider. */
  private async replayReceipts(): Promise<void> {
    const { repo, receipts, clock } = this.deps;
    for (const { receipt, task } of await replayReceipts(this.deps, receipts, (p) => this.pollable(p), clock.now())) {
      this.parts.log(`task ${task.id}: recorded request ${receipt.requestId} from the receipt journal`);
      if (task.status !== 'CANCELLED') continue;
      this.parts.trouble.inBackground(cancelLateRequest(repo, this.deps.providers(task.provider), task, receipt.requestId, () => clock.now()));
    }
    await this.followAfterCancels();
    this.lastSettle = clock.now();
  }

  /** Requests named after their task's cancel that a process which died left unfollowed (see unfollowedAfterCancel). */
  private async followAfterCancels(): Promise<void> {
    const { repo, clock } = this.deps;
    for (const task of await repo.unfollowedAfterCancel()) {
      this.parts.log(`task ${task.id}: request ${task.remoteRequestId} was named after its cancel and left unfollowed; following it`);
      this.parts.trouble.inBackground(cancelLateRequest(repo, this.deps.providers(task.provider), task, task.remoteRequestId!, () => clock.now()));
    }
  }

  private pollable(provider: string): boolean {
    return this.deps.providers(provider)?.capabilities.pollById ?? false;
  }

  /** No lease of anyone else is judged for one lease from now: the desktop app's suspend or resume renewed this process's. */
  renewed(): void {
    this.graceUntil = this.deps.clock.monotonic() + this.options.leaseMs;
  }

  /** One tick's sweeps before its claim; whether others' leases were judged (then expired rows may be claimed too). */
  async sweep(): Promise<boolean> {
    const { repo, clock } = this.deps;
    const { log, heartbeat, lookups, trouble } = this.parts;
    // A clock stepped or asleep since it was measured is measured at once, before it is used to judge anyone:
    // then only a sleep, not a step of this machine's clock, shows below as time passed on the database's clock.
    if (clock.monotonic() >= this.nextClockCheck || clock.settled?.() === false) await this.checkClock(false);
    const slept = this.sleep.look(clock.now(), clock.monotonic());
    if (slept > 0) {
      log(`the system slept for ${Math.round(slept / 1000)} s; renewing leases before judging any`);
      await heartbeat.beat();
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
        new Set(this.parts.inFlight()),
        log,
      );
    }
    // Off the path of any task's run: a bounded pass in the background, awaited by stop.
    const running = lookups.tick();
    if (running) trouble.inBackground(running);
    if (clock.now() - this.lastSettle > SETTLE_EVERY_MS) {
      await settleReceipts(repo, this.deps.receipts);
      await this.followAfterCancels();
      this.lastSettle = clock.now();
    }
    return judging;
  }
}
