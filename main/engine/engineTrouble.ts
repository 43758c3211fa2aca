/** What the engine does with its own errors: a database that cannot be written pauses it; anything else is logged. */
import type { Clock } from '../domain/ports.ts';
import { databaseUnavailable, type EngineHealth } from './health.ts';

export class EngineTrouble {
  /** Work outside any task's run (cancelling a late request, lookups), awaited by stop. */
  private readonly background = new Set<Promise<void>>();

  constructor(
    private readonly health: EngineHealth,
    private readonly clock: Clock,
    private readonly log: (message: string) => void,
  ) {}

  /**
   * A timer or promise of the engine met an error: a database that cannot be written pauses the engine
   * (it says why and resumes by itself); anything else is logged. Nothing is thrown out of the process.
   */
  trouble(err: unknown): void {
    if (databaseUnavailable(err)) this.health.blocked(err, this.clock.now());
    else this.log(`engine error: ${(err as Error)?.stack ?? String(err)}`);
  }

  /** Runs a step of the engine's own, never rejecting: what goes wrong is the engine's trouble. */
  async guarded(step: () => Promise<void>): Promise<boolean> {
    try {
      await step();
      return true;
    } catch (err) {
      this.trouble(err);
      return false;
    }
  }

  /** Work off the path of any task's run, awaited by stop; what goes wrong in it is the engine's trouble. */
  inBackground(work: Promise<void>): void {
    const running: Promise<void> = work.catch((err: unknown) => this.trouble(err)).finally(() => this.background.delete(running));
    this.background.add(running);
  }

  /** Settles when the background work under way now has. */
  settled(): Promise<unknown> {
    return Promise.all(this.background);
  }
}
