/**
 * fal's bill per request, read from its usage API where the person gave an admin key (Settings, under fal).
 * fal reports no cost with a result, so without this every fal figure is an estimate.
 *
 * It runs when a spend view is asked for, not on a timer and never on the paid path: what it writes only changes
 * figures a person reads, fal's usage records lag the requests, and an admin key is called no more often than someone
 * looks (and at most once a minute). A submit never waits for it, and a failed read changes no figure.
 */
import type { Task } from '../domain/tasks/model.ts';
import type { TaskStore } from '../store/port.ts';
import { attributeUsage, type SentRequest } from '../pricing/falBills.ts';
import { entryFor } from '../pricing/catalogue.ts';
import { readFalUsage, USAGE_BUCKET_MS, UsageCut, UsageUnreadable } from '../providers/falUsage.ts';

/** How far back requests are matched to usage: fal's records of a request arrive within this, and older bills are settled. */
const WINDOW_MS = 3 * 24 * 3_600_000;
const MIN_INTERVAL_MS = 60_000;
/** The whole reading, every page and body, ends by this: a reading fal drags out must not hold every later one. */
const READ_LIMIT_MS = 60_000;
/** fal's usage API takes 1 to 50 endpoint ids (fal.ai/docs/platform-apis/v1/models/usage.md). */
const MAX_ENDPOINTS = 50;

export interface FalBillStatus {
  state: 'off' | 'read' | 'failed';
  message: string;
}

const OFF: FalBillStatus = {
  state: 'off',
  message: "fal's figures are estimates: fal reports no cost per request. An admin key for fal in Settings lets the studio read fal's usage records for the bills",
};

const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED', 'OUTCOME_UNKNOWN']);

function sentRequest(t: Task): SentRequest | null {
  const ended = TERMINAL.has(t.status);
  if (ended && t.charged === 'no') return null;
  return {
    id: t.id,
    endpointId: t.model,
    kind: t.kind,
    input: (t.input ?? {}) as Record<string, unknown>,
    sentAt: t.submitStartedAt!,
    endedAt: ended ? (t.finishedAt ?? t.submitStartedAt) : null,
    settled: t.status === 'SUCCEEDED' && t.charged === 'yes',
    currency: t.currency,
    entry: entryFor('fal', t.model, t.kind),
  };
}

export class FalBills {
  private running: Promise<FalBillStatus> | null = null;
  private last: { at: number; key: string; status: FalBillStatus } | null = null;

  constructor(
    private readonly tasks: TaskStore,
    private readonly adminKey: () => string | undefined,
    private readonly baseUrl: () => string | null,
    private readonly now: () => number = Date.now,
    private readonly limitMs = READ_LIMIT_MS,
  ) {}

  /** What the last finished reading said, if any: a spend view still waiting on a new one can say how that one ended. */
  get lastStatus(): FalBillStatus | null {
    return this.last?.status ?? null;
  }

  /** Reads fal's usage and records what it bills, once at a time; the status says what happened, in words. */
  refresh(): Promise<FalBillStatus> {
    this.running ??= this.read().finally(() => (this.running = null));
    return this.running;
  }

  private async read(): Promise<FalBillStatus> {
    const key = this.adminKey();
    if (!key) return OFF;
    const now = this.now();
    if (this.last && this.last.key === key && this.last.status.state === 'read' && now - this.last.at < MIN_INTERVAL_MS) return this.last.status;
    const status = await this.reconcile(key, now);
    this.last = { at: now, key, status };
    return status;
  }

  private async reconcile(key: string, now: number): Promise<FalBillStatus> {
    const tasks = await this.tasks.sentSince('fal', now - WINDOW_MS);
    const sent = tasks.map(sentRequest).filter((r): r is SentRequest => r !== null);
    const unbilled = new Set(tasks.filter((t) => t.status === 'SUCCEEDED' && t.costActual === null).map((t) => t.id));
    if (unbilled.size === 0) return { state: 'read', message: "every fal request of the last three days that fal's usage records can bill has its bill" };
    const endpoints = [...new Set(sent.map((r) => r.endpointId))].slice(0, MAX_ENDPOINTS);
    const from = Math.floor(Math.min(...sent.map((r) => r.sentAt)) / USAGE_BUCKET_MS) * USAGE_BUCKET_MS;
    let lines;
    try {
      lines = await readFalUsage(key, this.baseUrl(), endpoints, from, now, AbortSignal.timeout(this.limitMs));
    } catch (err) {
      if (err instanceof UsageCut) {
        const limit = this.limitMs / 1000;
        const said = `fal's usage API did not finish answering within ${limit} second${limit === 1 ? '' : 's'}, so the reading was cut; it is tried again the next time spend is shown`;
        return { state: 'failed', message: `${said}. No figure was changed: fal's stay estimates` };
      }
      if (err instanceof UsageUnreadable) return { state: 'failed', message: `${err.message}. No figure was changed: fal's stay estimates` };
      throw err;
    }
    let billed = 0;
    let kept = 0;
    for (const v of attributeUsage(lines, sent, USAGE_BUCKET_MS, now)) {
      if (!unbilled.has(v.id)) continue;
      if (v.billed ? await this.tasks.recordBill(v.id, v.amount, v.source) : await this.tasks.noteNoBill(v.id, v.why)) {
        if (v.billed) billed++;
        else kept++;
      }
    }
    return {
      state: 'read',
      message: `read fal's usage records: ${billed} request${billed === 1 ? '' : 's'} billed from them` + (kept ? `, ${kept} kept at the estimate (each says why)` : ''),
    };
  }
}

const byStore = new WeakMap<TaskStore, FalBills>();

/** The one reader of fal's bills for a task store, so two spend views at once read fal once. */
export function falBillsFor(tasks: TaskStore, adminKey: () => string | undefined, baseUrl: () => string | null): FalBills {
  let bills = byStore.get(tasks);
  if (!bills) byStore.set(tasks, (bills = new FalBills(tasks, adminKey, baseUrl)));
  return bills;
}
