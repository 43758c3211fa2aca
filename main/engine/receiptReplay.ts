import type { Receipt, ReceiptLog } from '../ports.ts';
import type { Store, TaskStore } from '../store/port.ts';
import type { Task } from '../tasks/model.ts';

/** What a replay reads outside its transaction, and the transaction it writes in. */
export interface ReplayPorts {
  repo: Pick<TaskStore, 'receiptSettled'>;
  transaction: Store['transaction'];
}

/**
 * Puts the request ids that reached a receipt journal but not the table (a failed write, a crash) into
 * the table. Run at start-up, and before a person reconciles or adopts, so a request already named for
 * one task is never offered to, or adopted by, another. The last receipt of an attempt is the fullest (the
 * whole answer's, with its handle, after the headers'). Returns the rows it changed; journal files whose
 * receipts are all in the table are dropped.
 */
export async function replayReceipts(
  ports: ReplayPorts,
  receipts: ReceiptLog,
  pollable: (provider: string) => boolean,
  now: number,
): Promise<{ receipt: Receipt; task: Task }[]> {
  const latest = new Map<string, Receipt>();
  for (const r of receipts.all()) latest.set(`${r.taskId}:${r.idempotencyKey}`, r);
  const applied = latest.size === 0 ? [] : await ports.transaction(async ({ tasks }) => {
    const changed: { receipt: Receipt; task: Task }[] = [];
    for (const receipt of latest.values()) {
      if (await tasks.receiptSettled(receipt)) continue;
      const task = await tasks.applyReceipt(receipt, pollable((await tasks.get(receipt.taskId))!.provider), now);
      if (task) changed.push({ receipt, task });
    }
    return changed;
  });
  await settleReceipts(ports.repo, receipts);
  return applied;
}

/**
 * Drops the journal files whose receipts are all in the table. The table is asked first, receipt by receipt;
 * a receipt written meanwhile was not asked about, so it counts as not there yet and its file is kept.
 */
export async function settleReceipts(repo: Pick<TaskStore, 'receiptSettled'>, receipts: ReceiptLog): Promise<void> {
  const attempt = (r: Receipt) => `${r.taskId}:${r.idempotencyKey}`;
  const settled = new Set<string>();
  const asked = new Set<string>();
  for (const r of receipts.all()) {
    if (asked.has(attempt(r))) continue;
    asked.add(attempt(r));
    if (await repo.receiptSettled(r)) settled.add(attempt(r));
  }
  receipts.settle((r) => settled.has(attempt(r)));
}
