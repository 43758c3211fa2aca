import type { Clock } from '../domain/ports.ts';
import type { TaskStore } from '../store/port.ts';
import { coalesced } from './coalesced.ts';

/**
 * Renews the leases of the work in hand at one third of the lease, on its own timer, so a step with no
 * poll loop (a long ffmpeg run, a synchronous request) keeps its lease; two missed beats still leave a margin.
 */
export class Heartbeat {
  private timer: NodeJS.Timeout | null = null;
  private readonly beats = coalesced(() => this.renew());

  constructor(
    private readonly repo: Pick<TaskStore, 'renewLeases'>,
    private readonly clock: Clock,
    private readonly owner: string,
    private readonly leaseMs: number,
    private readonly held: () => number[],
    private readonly onLost: (ids: number[]) => void,
    private readonly onError: (err: unknown) => void,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.beat(), Math.max(10, Math.floor(this.leaseMs / 3)));
  }

  /** Stops the timer; settles once a beat under way has written. */
  stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    return this.beats.idle();
  }

  /**
   * Never rejects: a database that cannot be written now is the supervisor's to report, and the next beat tries
   * again. A beat asked for while one is writing follows it, so it renews from the time it is asked.
   */
  beat(): Promise<void> {
    return this.beats();
  }

  private async renew(): Promise<void> {
    const held = this.held();
    let renewed: Set<number>;
    try {
      renewed = await this.repo.renewLeases(held, this.leaseMs, { owner: this.owner, now: this.clock.now() });
    } catch (err) {
      this.onError(err);
      return;
    }
    const lost = held.filter((id) => !renewed.has(id));
    if (lost.length > 0) this.onLost(lost);
  }
}
