import type { Clock } from '../ports.ts';
import type { TaskRepository } from '../tasks/repository.ts';

/**
 * Renews the leases of the work in hand at one third of the lease, on its own timer, so a step with no
 * poll loop (a long ffmpeg run, a synchronous request) keeps its lease; two missed beats still leave a margin.
 */
export class Heartbeat {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly repo: Pick<TaskRepository, 'renewLeases'>,
    private readonly clock: Clock,
    private readonly owner: string,
    private readonly leaseMs: number,
    private readonly held: () => number[],
    private readonly onLost: (ids: number[]) => void,
    private readonly onError: (err: unknown) => void,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => this.beat(), Math.max(10, Math.floor(this.leaseMs / 3)));
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Never throws: a database that cannot be written now is the supervisor's to report, and the next beat tries again. */
  beat(): void {
    const held = this.held();
    let renewed: Set<number>;
    try {
      renewed = this.repo.renewLeases(held, this.leaseMs, { owner: this.owner, now: this.clock.now() });
    } catch (err) {
      this.onError(err);
      return;
    }
    const lost = held.filter((id) => !renewed.has(id));
    if (lost.length > 0) this.onLost(lost);
  }
}
