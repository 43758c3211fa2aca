import type { Receipt } from '../domain/ports.ts';
import type { Task } from '../domain/tasks/model.ts';
import { attemptOfKey, namesItsTask } from '../store/receiptParams.ts';

/** One attempt of one task as a receipt names it: task id, key, and the task's identity where it names one. */
const attemptOf = (r: Receipt) => `${r.taskId}:${r.idempotencyKey}:${namesItsTask(r) ? `${r.task!.inputHash}:${r.task!.createdAt}` : ''}`;

export interface ReceiptChoice {
  /**
   * The receipt to apply for each attempt: its last, the fullest (the whole answer's, with its handle, after the headers').
   * In attempt order, whatever order the journal files were read in: a row restored from an older backup takes its
   * earliest journaled attempt, and a sibling collects each later one.
   */
  chosen: Receipt[];
  /**
   * Attempts that receipts naming no task give two or more requests: journals of two databases sharing a data folder,
   * written before receipts named their database, under the same task id and key. Which is the task's cannot be told,
   * so none is applied; each group holds the last receipt of each request, for a person to choose from.
   */
  rivals: Receipt[][];
}

/** Picks, attempt by attempt, the receipt a replay applies, and sets apart the attempts it cannot decide. */
export function chooseReceipts(receipts: readonly Receipt[]): ReceiptChoice {
  const byAttempt = new Map<string, Map<string, Receipt>>();
  for (const r of receipts) {
    const requests = byAttempt.get(attemptOf(r)) ?? new Map<string, Receipt>();
    requests.delete(r.requestId);
    requests.set(r.requestId, r);
    byAttempt.set(attemptOf(r), requests);
  }
  const choice: ReceiptChoice = { chosen: [], rivals: [] };
  for (const requests of byAttempt.values()) {
    const group = [...requests.values()];
    if (group.length > 1 && !group.every(namesItsTask)) choice.rivals.push(group);
    else choice.chosen.push(group.at(-1)!);
  }
  choice.chosen.sort((a, b) => attemptOfKey(a.idempotencyKey) - attemptOfKey(b.idempotencyKey));
  return choice;
}

/**
 * The settled receipts (see ReceiptJournal) a replay applies: each to the very task it names, only where that row is
 * behind it (restored from a backup older than the request: below the receipt's attempt, nothing sent, no request held),
 * in attempt order. A row a person resubmitted is past the attempt, so it never takes back a request it was decided
 * against.
 */
export function behindArchive(archived: readonly Receipt[], rows: readonly Task[]): Receipt[] {
  const behind = new Map(rows.filter((t) => t.remoteRequestId === null && t.submitStartedAt === null).map((t) => [t.id, t]));
  const applies = (r: Receipt) => {
    const row = behind.get(r.taskId);
    return !!row && namesItsTask(r) && row.inputHash === r.task!.inputHash && row.createdAt === r.task!.createdAt && row.attempts < attemptOfKey(r.idempotencyKey);
  };
  return chooseReceipts(archived.filter(applies)).chosen;
}
