import type { Receipt, ReceiptLog } from '../domain/ports.ts';
import type { Store, TaskStore } from '../store/port.ts';
import type { Task } from '../domain/tasks/model.ts';
import { chooseReceipts } from './receiptChoice.ts';
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
  const toRequeue: Task[] = [];
  const toPark: Task[] = [];
  for (const task of expired) {
    const recovery = recoveryFor(task);
    if (recovery.action === 'requeue') toRequeue.push(task);
    // A saved result is left for the claim to complete.
    else if (recovery.action === 'park' && !ports.hasResult(task)) toPark.push(task);
  }
  if (toRequeue.length === 0 && toPark.length === 0) return;
  let receipts: Receipt[] | undefined;
  // One transaction for the whole sweep, and one write for each kind of recovery: after a crash with many rows in
  // flight, a few statements and one sync instead of one each.
  await ports.transaction(async ({ tasks }) => {
    for (const task of await tasks.recoverRequeueAll(toRequeue, now, 'lease expired before anything was sent; requeued')) {
      log(`task ${task.id}: requeued (nothing had been sent)`);
    }
    const unexplained: { task: Task; reason: string }[] = [];
    for (const task of toPark) {
      // The attempt's receipts as a replay chooses them; only the one of this task's identity is applied (see applyReceipt).
      receipts ??= chooseReceipts(ports.receipts.all()).chosen;
      const mine = task.remoteRequestId === null ? receipts.filter((r) => r.taskId === task.id && r.idempotencyKey === task.idempotencyKey) : [];
      let recorded: Receipt | undefined;
      for (const receipt of mine) if (!recorded && (await tasks.applyReceipt(receipt, ports.pollable(task), now))) recorded = receipt;
      if (recorded) {
        log(`task ${task.id}: its worker stopped after the provider named request ${recorded.requestId}; recorded it`);
      } else {
        unexplained.push({ task, reason: interruptedReason(task) });
      }
    }
    for (const task of await tasks.recoverParkAll(unexplained, now)) log(`task ${task.id}: outcome unknown, needs a decision`);
  });
}
