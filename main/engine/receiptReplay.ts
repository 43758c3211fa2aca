import type { Receipt, ReceiptLog } from '../ports.ts';
import type { Task } from '../tasks/model.ts';
import type { TaskRepository } from '../tasks/repository.ts';

/**
 * Puts the request ids that reached a receipt journal but not the table (a failed write, a crash) into
 * the table. Run at start-up, and before a person reconciles or adopts, so a request already named for
 * one task is never offered to, or adopted by, another. The last receipt of an attempt is the fullest (the
 * whole answer's, with its handle, after the headers'). Returns the rows it changed; journal files whose
 * receipts are all in the table are dropped.
 */
export function replayReceipts(
  repo: Pick<TaskRepository, 'batch' | 'get' | 'receiptSettled' | 'applyReceipt'>,
  receipts: ReceiptLog,
  pollable: (provider: string) => boolean,
  now: number,
): { receipt: Receipt; task: Task }[] {
  const latest = new Map<string, Receipt>();
  for (const r of receipts.all()) latest.set(`${r.taskId}:${r.idempotencyKey}`, r);
  const applied: { receipt: Receipt; task: Task }[] = [];
  repo.batch(() => {
    for (const receipt of latest.values()) {
      if (repo.receiptSettled(receipt)) continue;
      const task = repo.applyReceipt(receipt, pollable(repo.get(receipt.taskId)!.provider), now);
      if (task) applied.push({ receipt, task });
    }
  });
  receipts.settle((r) => repo.receiptSettled(r));
  return applied;
}
