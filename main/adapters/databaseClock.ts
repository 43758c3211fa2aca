import type { Clock } from '../ports.ts';

/**
 * The team database's clock as this machine reads it: its own clock less the offset last measured against the
 * database. Times a team writes and compares (a task's history, when it was parked, a lookup's window) then agree
 * across machines and with the providers' clocks, even on a machine whose own clock is wrong.
 */
export class DatabaseClock implements Clock {
  private offsetMs = 0;

  constructor(private readonly local: Clock) {}

  /** This machine's clock less the database's, as just measured. */
  measured(offsetMs: number): void {
    this.offsetMs = offsetMs;
  }

  now(): number {
    return this.local.now() - this.offsetMs;
  }

  monotonic(): number {
    return this.local.monotonic();
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return this.local.sleep(ms, signal);
  }
}
