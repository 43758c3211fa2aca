/**
 * Notices a system sleep: the monotonic clock stops while the machine sleeps and the wall clock does not,
 * so wall time racing ahead of monotonic time between two looks means the machine was asleep.
 */
export class SleepDetector {
  private last: { wall: number; mono: number } | null = null;

  constructor(private readonly thresholdMs: number) {}

  /** Milliseconds slept since the previous look (0 if none). */
  look(wall: number, mono: number): number {
    const prev = this.last;
    this.last = { wall, mono };
    if (!prev) return 0;
    const slept = wall - prev.wall - (mono - prev.mono);
    return slept > this.thresholdMs ? slept : 0;
  }
}
