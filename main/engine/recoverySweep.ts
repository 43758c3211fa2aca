import type { TaskRepository } from '../tasks/repository.ts';
import { INTERRUPTED_IN_SEND_WINDOW, recoveryFor } from './recovery.ts';

/**
 * Applies recoveryFor to every row whose lease ran out, except the ones this process is working on.
 * A submitted row is left as it is: the claim picks it up, still SUBMITTED, and polls it.
 */
export function recoverExpired(
  repo: Pick<TaskRepository, 'batch' | 'expiredLeases' | 'recoverRequeue' | 'recoverPark'>,
  now: number,
  working: ReadonlySet<number>,
  log: (message: string) => void,
): void {
  const expired = repo.expiredLeases(now).filter((t) => !working.has(t.id));
  if (expired.length === 0) return;
  // One transaction for the whole sweep: after a crash with many rows in flight, one sync instead of one each.
  repo.batch(() => {
    for (const task of expired) {
      const recovery = recoveryFor(task);
      if (recovery.action === 'requeue' && repo.recoverRequeue(task, now, 'lease expired before anything was sent; requeued')) {
        log(`task ${task.id}: requeued (nothing had been sent)`);
      } else if (recovery.action === 'park' && repo.recoverPark(task, now, INTERRUPTED_IN_SEND_WINDOW)) {
        log(`task ${task.id}: outcome unknown, needs a decision`);
      }
    }
  });
}
