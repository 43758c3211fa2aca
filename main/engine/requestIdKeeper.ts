import type { Money, ProviderAdapter, SubmitResult } from '../providers/port.ts';
import type { Clock, Receipt, ReceiptLog } from '../domain/ports.ts';
import type { Task } from '../domain/tasks/model.ts';
import type { TaskStore } from '../store/port.ts';
import { untilWritten } from './durableWrite.ts';
import { cancelLateRequest } from './lateCancel.ts';
import { unusableQuote } from './storableCost.ts';
import { titleOf } from '../providers/registry.ts';
import type { EngineHealth } from './health.ts';

interface KeeperPorts {
  repo: Pick<TaskStore, 'recordSubmitted' | 'noteRequestId' | 'applyReceipt' | 'get' | 'note' | 'followAfterCancel' | 'settleFollow'>;
  provider: ProviderAdapter;
  receipts: ReceiptLog;
  clock: Clock;
  health: EngineHealth;
  log: (message: string) => void;
}

/** The row as recorded, or why it is not: the engine stopped, or the row moved on without this worker. */
export type Kept = Task | 'stopped' | 'elsewhere';

/**
 * Keeps one attempt's request id from the moment the provider names it. The id is journaled and synced
 * first (the receipt survives a crash, a full or locked database, and is replayed into the table), then
 * written to the row, retrying while the database cannot be written. A row that refuses it (cancelled
 * meanwhile, or parked by another worker) still gets it, as a receipt, and a cancelled one is cancelled
 * at the provider too.
 */
export class RequestIdKeeper {
  requestId: string | null = null;
  private journaled: string | null = null;

  constructor(
    private readonly task: Task,
    private readonly idempotencyKey: string,
    /** The id of the database the task is in, named on every receipt (see Receipt.database). */
    private readonly database: string,
    private readonly ports: KeeperPorts,
    private readonly owner: string,
  ) {}

  /**
   * From the response headers, before any body is read: synchronous, never throws. The id is journaled; if
   * the journal cannot be written, its write to the row starts at once instead of when the answer is whole
   * (the whole answer's write follows it, and holds the id whatever became of this one).
   */
  heard(requestId: string): void {
    this.requestId = requestId;
    if (this.journal(requestId, null)) return;
    void (async () => {
      try {
        const { repo, provider } = this.ports;
        if (provider.capabilities.pollById) await repo.recordSubmitted(this.task.id, { requestId, handle: null }, null, this.lease());
        else await repo.noteRequestId(this.task.id, requestId, this.lease());
      } catch (err) {
        this.ports.log(`task ${this.task.id}: request ${requestId} could not be written yet either (${(err as Error).message}); kept in memory`);
      }
    })();
  }

  /** This attempt's receipt, naming its database and its task's identity (see receiptOrigin). */
  private receipt(requestId: string, handle: Record<string, string> | null, alias: string | null = null): Receipt {
    const { inputHash, createdAt } = this.task;
    return { database: this.database, taskId: this.task.id, task: { inputHash, createdAt }, idempotencyKey: this.idempotencyKey, requestId, alias, handle, at: this.ports.clock.now() };
  }

  /** Whether the receipt is on disk. */
  private journal(requestId: string, handle: Record<string, string> | null, alias: string | null = null): boolean {
    if (this.journaled === requestId && handle === null && alias === null) return true;
    try {
      this.ports.receipts.append(this.receipt(requestId, handle, alias));
      this.journaled = requestId;
      return true;
    } catch (err) {
      this.ports.log(`task ${this.task.id}: request ${requestId} could not be journaled (${(err as Error).message}); writing it to the task now`);
      return false;
    }
  }

  /** The whole answer: the row becomes SUBMITTED with everything needed to reach the request again. */
  async record(accepted: SubmitResult, signal: AbortSignal): Promise<Kept> {
    this.requestId = accepted.requestId;
    const alias = accepted.alias ?? null;
    this.journal(accepted.requestId, accepted.handle, alias);
    const quote: Money | null = accepted.quote;
    const { repo, provider, clock } = this.ports;
    const unusable = quote && unusableQuote(quote, this.task.currency, titleOf(provider.id));
    const estimate = quote && !unusable ? { cost: quote.amount, source: `${provider.id} quote` } : null;
    const kept = await this.write(
      signal,
      () => repo.recordSubmitted(this.task.id, { requestId: accepted.requestId, handle: accepted.handle, alias }, estimate, this.lease()),
      accepted.handle,
      Boolean(accepted.result),
    );
    if (unusable && kept !== 'stopped') await untilWritten(() => repo.note(this.task.id, unusable, { quote }, clock.now()), this.ports, signal);
    return kept;
  }

  /**
   * A named request whose answer broke: SUBMITTED when the provider can be asked about it by id, else the
   * id is kept on the still-running row for the person who must decide.
   */
  settled(signal: AbortSignal): Promise<Kept> {
    const requestId = this.requestId!;
    return this.write(signal, () =>
      this.ports.provider.capabilities.pollById
        ? this.ports.repo.recordSubmitted(this.task.id, { requestId, handle: null }, null, this.lease())
        : this.ports.repo.noteRequestId(this.task.id, requestId, this.lease()),
    );
  }

  /** Fenced by the attempt too: the row may since be another attempt of the same owner (see Lease.attempt). */
  private lease() {
    return { owner: this.owner, now: this.ports.clock.now(), attempt: this.idempotencyKey };
  }

  private async write(signal: AbortSignal, write: () => Promise<Task | undefined>, handle: Record<string, string> | null = null, inHand = false): Promise<Kept> {
    const written = await untilWritten(async () => ({ row: await write() }), this.ports, signal);
    if (!written) return 'stopped';
    if (written.row) return written.row;
    await this.late(signal, handle, inHand);
    return 'elsewhere';
  }

  /**
   * The row moved on while the request was out: it gets the id all the same. A row at another attempt by now (parked
   * and resubmitted meanwhile) takes it where that buys nothing twice; else a sibling task collects its result, or
   * where it cannot be fetched by id, the row keeps it in its history (see applyReceipt). `inHand`: the answer holds the
   * result, which the caller saves and completes the row with.
   */
  private async late(signal: AbortSignal, handle: Record<string, string> | null, inHand: boolean): Promise<void> {
    const { repo, provider, clock } = this.ports;
    const requestId = this.requestId!;
    const receipt = this.receipt(requestId, handle);
    const took = await untilWritten(() => repo.applyReceipt(receipt, provider.capabilities.pollById, clock.now()), this.ports, signal);
    const now = await repo.get(this.task.id);
    if (now && now.idempotencyKey !== this.idempotencyKey) {
      const kept = took && took.id !== this.task.id ? `collected as task ${took.id}` : 'kept in its history';
      this.ports.log(`task ${this.task.id}: request ${requestId} of attempt ${this.idempotencyKey} was named after the task had moved on; ${kept}`);
    }
    // Cancelled while the request was being sent: stop the paid work where the provider allows it, else collect it. Only
    // when this worker put the id on the row: one that had it already (a cancel that read the journal) was dealt with there.
    if (now?.status === 'CANCELLED' && took?.id === this.task.id) await cancelLateRequest(repo, provider, now, requestId, () => clock.now(), inHand);
  }
}
