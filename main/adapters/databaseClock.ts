import type { Clock } from '../domain/ports.ts';
import { clockStepped } from '../engine/clockOffset.ts';

/**
 * The team database's clock as this machine reads it: its own clock less the offset last measured against the
 * database. Times a team writes and compares (a task's history, when it was parked, a lookup's window) then agree
 * across machines and with the providers' clocks, even on a machine whose own clock is wrong.
 *
 * The offset holds only while this machine's clock runs on as it did when measured. A clock set by hand or by
 * network time, or a system sleep, moves the wall clock apart from the monotonic one: from then the reading is
 * unsettled (see settled) until the offset is measured again, which the engine does at its next tick.
 */
export class DatabaseClock implements Clock {
  private offsetMs = 0;
  /** This machine's wall and monotonic clocks when the offset was measured; null before any measurement. */
  private base: { wall: number; mono: number } | null = null;
  private stepped = true;

  constructor(private readonly local: Clock) {}

  /**
   * Measures the offset with `offsetOf` (this machine's clock less the database's, or null where there is none)
   * and keeps it; a step of this machine's clock while it was measured leaves the clock unsettled.
   */
  async measure(offsetOf: () => Promise<number | null>): Promise<number | null> {
    const before = { wall: this.local.now(), mono: this.local.monotonic() };
    const offset = await offsetOf();
    if (offset === null) return null;
    this.offsetMs = offset;
    this.base = before;
    this.stepped = false;
    this.look();
    return offset;
  }

  /** Whether the reading can be trusted: measured, and this machine's clock not stepped (nor asleep) since. */
  settled(): boolean {
    this.look();
    return !this.stepped;
  }

  now(): number {
    this.look();
    return this.local.now() - this.offsetMs;
  }

  monotonic(): number {
    return this.local.monotonic();
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return this.local.sleep(ms, signal);
  }

  private look(): void {
    if (this.base && !this.stepped) this.stepped = clockStepped(this.base, { wall: this.local.now(), mono: this.local.monotonic() });
  }
}
