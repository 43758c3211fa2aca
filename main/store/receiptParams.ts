import type { Receipt } from '../domain/ports.ts';

/** The attempt number a key names (`…-attempt-M`, in both the old and the current form); 0 when it names none. */
export function attemptOfKey(key: string): number {
  const m = /-attempt-(\d+)$/.exec(key);
  return m ? Number(m[1]) : 0;
}

/** A receipt names both its database and its task's identity; one that lacks either is read as unnamed (see receiptOrigin). */
export const namesItsTask = (receipt: Receipt) => receipt.database !== null && receipt.task !== null;

/**
 * The named parameters applyReceipt writes from a journaled receipt, alike in both stores. `inputHash` and
 * `createdAt` are the task identity of a named receipt (see receiptOrigin), null for an unnamed one.
 */
export function receiptParams(receipt: Receipt, now: number) {
  const named = namesItsTask(receipt);
  return {
    now,
    key: receipt.idempotencyKey,
    attempt: attemptOfKey(receipt.idempotencyKey),
    requestId: receipt.requestId,
    alias: receipt.alias ?? null,
    handle: receipt.handle ? JSON.stringify(receipt.handle) : null,
    at: receipt.at,
    inputHash: named ? receipt.task!.inputHash : null,
    createdAt: named ? receipt.task!.createdAt : null,
  };
}

/**
 * Whose a receipt is: this database's, another's (never applied, never settled here: it is that database's to apply),
 * or unnamed, from a journal written before receipts named their database and their task.
 *
 * A receipt of this database names its task too (input hash and creation time): a restored backup gives a new task an
 * id the journal names for another, and a data folder copied by a version before copies drew ids of their own (see settleHome) keeps its database's id, so only a row of that identity
 * is its task. A row of the same id and another identity is another step: the receipt is never applied to it and
 * never settled by it, but kept in its journal.
 *
 * An unnamed receipt may be another database's: a team worker and the embedded studio sharing a data folder both
 * numbered their tasks from 1 and keyed them `studio-task-N-attempt-M`, so its task id and key alone prove nothing.
 * It is applied only to a row at exactly its attempt (task and key), with no request id yet, whose send started
 * before the receipt was heard, and only where no other task holds the request; never to an earlier attempt of the
 * row, nor as a sibling task; and never when another unnamed receipt names another request for the same attempt (see
 * chooseReceipts). Keys since carry the database's id, so it can only ever match an attempt sent before the upgrade.
 * It counts as settled only once the row holds exactly its request, so a journal that may hold another database's
 * receipts is never dropped on this database's word.
 */
export type ReceiptOrigin = 'this' | 'other' | 'unnamed';

/** `databaseIds`: this database's id and those it had before it was copied. */
export function receiptOrigin(receipt: Receipt, databaseIds: readonly string[]): ReceiptOrigin {
  if (receipt.database !== null && !databaseIds.includes(receipt.database)) return 'other';
  return namesItsTask(receipt) ? 'this' : 'unnamed';
}

/** What a receipt's row says about it (absent: there is no such task), as both stores read it. */
export interface ReceiptRow {
  /** The row is the receipt's task: the same input hash and creation time (always, for an unnamed receipt). */
  same: boolean;
  /** The row is at the receipt's attempt. */
  own: boolean;
  /** The row has a request id. */
  named: boolean;
  /** That request id is the receipt's. */
  holds: boolean;
  /**
   * The request is accounted for: a task of this database holds it (as its request id or its other name), or the row's
   * history notes it; or its key names no attempt of the task (no key the engine makes, and one the task never marked).
   * Nothing else settles it, not even a row at or past the receipt's attempt holding another request: that request was
   * paid too (two workers sent the attempt, the database restored between), and is collected or noted.
   */
  noted: boolean;
}

/**
 * Whether the table already holds what a receipt says, or its attempt is over (see receiptOrigin). A receipt of this
 * database whose task the table does not hold, or holds under another identity, is kept: it is the only record of a
 * request that was paid for.
 */
export function receiptSettledBy(origin: ReceiptOrigin, row: ReceiptRow | undefined): boolean {
  if (origin === 'other') return false;
  if (origin === 'unnamed') return !!row && row.own && row.holds;
  return !!row && row.same && row.noted;
}

/**
 * The row's words for a request of its task that a sibling task collects: `marked` counts the row's marked attempts up
 * to the receipt's (0: the row never marked it, a backup restored after it was sent), `sameAttempt` says the row holds
 * another request for that very attempt.
 */
export function collectedWords(marked: number, sameAttempt: boolean, attempt: number, sibling: number): string {
  if (marked > 0 && !sameAttempt) return `the paid request of its earlier attempt ${marked} is collected as task ${sibling}`;
  const which = sameAttempt ? `another request of its attempt ${attempt}` : `the request of its attempt ${attempt}`;
  return `${which}, sent before this database was restored from an older backup and paid for, is collected as task ${sibling}`;
}

/** The sibling's words for the request it collects (see collectedWords). */
export function siblingWords(marked: number, sameAttempt: boolean, attempt: number, of: number): string {
  if (marked > 0 && !sameAttempt) return `the paid request of task ${of}'s earlier attempt, named after that task had moved on`;
  return `the paid request of task ${of}'s attempt ${attempt}, sent before the database was restored from an older backup, which task ${of} does not hold`;
}

/** The event of a row that takes the request of an attempt it had not reached (see the stores' aheadReceipt). */
export const BEHIND_JOURNAL =
  'the database was behind its receipt journal (restored from an older backup): this attempt\'s request was sent already, so it is followed, never sent again';

/** Why such a row's outcome is unknown where the provider cannot be asked for the request by id. */
export const behindJournalReason = (requestId: string) =>
  `the database was restored from a backup older than request ${requestId}, which this task sent; it may have been charged, and its result cannot be asked for by id`;

/** The event naming each rival request of an attempt (see chooseReceipts), which reconcile offers as a candidate. */
export const RIVAL_RECEIPTS =
  'the receipt journal names this request for this attempt beside another, in journals written before they named their database; which is this task\'s cannot be told, so none was recorded';
