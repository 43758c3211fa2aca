import type { Receipt } from '../ports.ts';

/** The named parameters applyReceipt writes from a journaled receipt, alike in both stores. */
export function receiptParams(receipt: Receipt, now: number) {
  return {
    now,
    key: receipt.idempotencyKey,
    requestId: receipt.requestId,
    handle: receipt.handle ? JSON.stringify(receipt.handle) : null,
    at: receipt.at,
  };
}
