import type { Receipt, ReceiptLog } from '../domain/ports.ts';
import type { Store, TaskStore } from '../store/port.ts';
import type { Task } from '../domain/tasks/model.ts';
import { behindArchive, chooseReceipts } from './receiptChoice.ts';

/** What a replay reads outside its transaction, and the transaction it writes in. */
export interface ReplayPorts {
  repo: Pick<TaskStore, 'receiptSettled'>;
  transaction: Store['transaction'];
}

/**
 * Puts the request ids that reached a receipt journal but not the table (a failed write, a crash) into
 * the table: this database's only, as the journal reads them and the store's applyReceipt checks again. Run at
 * start-up, and before a person reconciles or adopts, so a request already named for
 * one task is never offered to, or adopted by, another. One receipt is applied per attempt (see chooseReceipts); an
 * attempt that unnamed receipts give rival requests gets none, and its task's history names each for a person (see
 * noteRivalReceipts). Settled receipts are applied too, to rows behind them only (see behindArchive). Returns the rows
 * it changed; journal files whose receipts are all in the table are moved to the archive.
 */
export async function replayReceipts(
  ports: ReplayPorts,
  receipts: ReceiptLog,
  pollable: (provider: string) => boolean,
  now: number,
): Promise<{ receipt: Receipt; task: Task }[]> {
  const { chosen, rivals } = chooseReceipts(receipts.all());
  const archived = receipts.archived();
  const applied = chosen.length + rivals.length + archived.length === 0 ? [] : await ports.transaction(async ({ tasks }) => {
    const changed: { receipt: Receipt; task: Task }[] = [];
    const apply = async (receipt: Receipt) => {
      if (await tasks.receiptSettled(receipt)) return;
      // A receipt of a journal that named no database may name a task this database does not have (see receiptOrigin).
      const row = await tasks.get(receipt.taskId);
      const task = row && (await tasks.applyReceipt(receipt, pollable(row.provider), now));
      if (task) changed.push({ receipt, task });
    };
    for (const group of rivals) await tasks.noteRivalReceipts(group, now);
    for (const receipt of chosen) await apply(receipt);
    if (archived.length > 0) {
      const unsent = [...(await tasks.list({ status: 'PENDING' })), ...(await tasks.list({ status: 'RUNNING' }))];
      for (const receipt of behindArchive(archived, unsent)) await apply(receipt);
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
  // One question per request of an attempt of one task: rivals, or another step under the same id, are asked each.
  const attempt = (r: Receipt) => JSON.stringify([r.database, r.taskId, r.task, r.idempotencyKey, r.requestId]);
  const settled = new Set<string>();
  const asked = new Set<string>();
  for (const r of receipts.all()) {
    if (asked.has(attempt(r))) continue;
    asked.add(attempt(r));
    if (await repo.receiptSettled(r)) settled.add(attempt(r));
  }
  receipts.settle((r) => settled.has(attempt(r)));
}
