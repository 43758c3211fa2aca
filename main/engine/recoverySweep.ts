import type { TaskRepository } from '../tasks/repository.ts';
import { INTERRUPTED_IN_SEND_WINDOW, recoveryFor } from './recovery.ts';

/**
 * Applies recoveryFor to every row whose lease ran out, except the ones this process is working on.
 * A submitted row is left as it is: the claim picks it up, still SUBMITTED, and polls it.
 */
export function recoverExpired(
  repo: Pick<TaskRepository, 'expiredLeases' | 'recoverRequeue' | 'recoverPark'>,
  now: number,
  working: ReadonlySet<number>,
  log: (message: string) => void,
): void {
  for (const task of repo.expiredLeases(now)) {
    if (working.has(task.id)) continue;
    const recovery = recoveryFor(task);
    if (recovery.action === 'requeue' && repo.recoverRequeue(task, now, 'lease expired before anything was sent; requeued')) {
      log(`task ${task.id}: requeued (nothing had been sent)`);
    } else if (recovery.action === 'park' && repo.recoverPark(task, now, INTERRUPTED_IN_SEND_WINDOW)) {
      log(`task ${task.id}: outcome unknown, needs a decision`);
    }
  }
}
