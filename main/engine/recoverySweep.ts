import type { ReceiptLog } from '../ports.ts';
import type { Store, TaskStore } from '../store/port.ts';
import type { Task } from '../tasks/model.ts';
import { interruptedReason, recoveryFor } from './recovery.ts';

export interface SweepPorts {
  repo: Pick<TaskStore, 'expiredLeases'>;
  /** The sweep's writes go in one transaction. */
  transaction: Store['transaction'];
  receipts: Pick<ReceiptLog, 'all'>;
  /** A result record is on disk for the task: a worker completes it from there, so it is never parked. */
  hasResult: (task: Task) => boolean;
  pollable: (task: Task) => boolean;
}

/**
 * Applies recoveryFor to every row whose lease ran out, except the ones this process is working on.
 * A submitted row is left as it is: the claim picks it up, still SUBMITTED, and polls it. Before a row is
 * parked as unknown, the evidence its dead worker left on disk is read: a journaled request id makes it
 * SUBMITTED instead, and a saved result is left for the claim to complete.
 */
export async function recoverExpired(ports: SweepPorts, now: number, working: ReadonlySet<number>, log: (message: string) => void): Promise<void> {
  const expired = (await ports.repo.expiredLeases(now)).filter((t) => !working.has(t.id));
  if (expired.length === 0) return;
  let receipts: ReturnType<ReceiptLog['all']> | undefined;
  // One transaction for the whole sweep: after a crash with many rows in flight, one sync instead of one each.
  await ports.transaction(async ({ tasks }) => {
    for (const task of expired) {
      const recovery = recoveryFor(task);
      if (recovery.action === 'requeue' && (await tasks.recoverRequeue(task, now, 'lease expired before anything was sent; requeued'))) {
        log(`task ${task.id}: requeued (nothing had been sent)`);
      } else if (recovery.action === 'park') {
        if (ports.hasResult(task)) continue;
        receipts ??= ports.receipts.all();
        // The last receipt of the attempt is the fullest: the whole answer's, with its handle, after the headers'.
        const receipt = task.remoteRequestId === null ? receipts.filter((r) => r.taskId === task.id && r.idempotencyKey === task.idempotencyKey).at(-1) : undefined;
        if (receipt && (await tasks.applyReceipt(receipt, ports.pollable(task), now))) {
          log(`task ${task.id}: its worker stopped after the provider named request ${receipt.requestId}; recorded it`);
        } else if (await tasks.recoverPark(task, now, interruptedReason(task))) {
          log(`task ${task.id}: outcome unknown, needs a decision`);
        }
      }
    }
  });
}
