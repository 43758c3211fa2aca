import { Readable } from 'node:stream';
import type { SubmitFailure } from '../../main/domain/submitOutcome.ts';
import type { PollResult, PreparedRequest, ProviderAdapter, ProviderCapabilities, SubmitResult } from '../../main/providers/port.ts';
import { SubmitError } from '../../main/providers/port.ts';
import { InvalidInput } from '../../main/providers/invalidInput.ts';
import type { OutputStore, OutputTarget, Receipt, ReceiptLog, ResultRecord, SavedOutput } from '../../main/domain/ports.ts';
import type { SweepPorts } from '../../main/engine/recoverySweep.ts';
import type { Store } from '../../main/store/port.ts';
import type { RemoteRef, Task } from '../../main/domain/tasks/model.ts';

/** Wraps an object so every method call is appended to `calls` by name, then passed through. */
export function recording<T extends object>(target: T, calls: string[], names?: readonly string[]): T {
  return new Proxy(target, {
    get(obj, prop, receiver) {
      const value = Reflect.get(obj, prop, receiver);
      if (typeof value !== 'function' || (names && !names.includes(String(prop)))) return value;
      return (...args: unknown[]) => {
        calls.push(String(prop));
        return (value as (...a: unknown[]) => unknown).apply(obj, args);
      };
    },
  });
}

export interface FakeProviderScript {
  /** One entry per submit call: a failure to throw, or undefined to accept. */
  submits?: (SubmitFailure | undefined)[];
  /** Polls that answer pending before the result. */
  pendingPolls?: number;
  /** Never finishes. */
  never?: boolean;
  idempotencyHeader?: string | null;
}

/**
 * An in-memory provider for the executor's order tests. A mock, because the point is the sequence of
 * calls; the crash tests drive the same executor through the real simulator over HTTP.
 */
export class FakeProvider implements ProviderAdapter {
  readonly id = 'fake';
  readonly capabilities: ProviderCapabilities;
  readonly keys: string[] = [];
  private polls = 0;

  constructor(private readonly script: FakeProviderScript = {}) {
    this.capabilities = {
      mode: 'async' as const,
      idempotencyHeader: script.idempotencyHeader ?? null,
      lookup: false,
      pollById: true,
      cancel: false,
      quote: 'submit',
      billing: 'the result',
      neverBilled: null,
      models: [{ id: 'fake-image', kind: 'image', title: 'Fake image', inputs: { prompt: { type: 'string' as const, required: true } } }],
    };
  }

  prepare(task: Pick<Task, 'kind' | 'model' | 'input'>): PreparedRequest {
    const prompt = (task.input as { prompt?: unknown }).prompt;
    if (typeof prompt !== 'string') throw new InvalidInput('an image needs a "prompt"');
    return { kind: task.kind, model: task.model, input: { prompt }, body: { prompt } };
  }

  async submit(_req: PreparedRequest, options: { idempotencyKey: string }): Promise<SubmitResult> {
    this.keys.push(options.idempotencyKey);
    const failure = this.script.submits?.shift();
    if (failure) throw new SubmitError(failure);
    return { requestId: 'req-1', handle: null, quote: { amount: 40_000, currency: 'USD' }, result: null };
  }

  async poll(_remote: RemoteRef, _signal?: AbortSignal): Promise<PollResult> {
    this.polls++;
    if (this.script.never || this.polls <= (this.script.pendingPolls ?? 0)) return { state: 'pending', progress: 0.5 };
    return {
      state: 'succeeded',
      result: { outputs: [{ url: 'fake://out.png', contentType: 'image/png' }], costActual: { amount: 60_000, currency: 'USD', source: 'the fake result', reported: 'money' } },
    };
  }

  async download(): Promise<AsyncIterable<Uint8Array>> {
    return Readable.from([Buffer.from('png bytes')]);
  }
}

/** Outputs and result records kept in memory, for tests about order rather than files. */
export function memoryOutputs(): OutputStore {
  const records = new Map<number, ResultRecord>();
  const saved = async (target: OutputTarget, bytes: number): Promise<SavedOutput> => ({
    path: `/media/task-${target.taskId}${target.index ? `-${target.index}` : ''}.png`,
    sha256: 'f'.repeat(64),
    bytes,
    contentType: target.contentType,
  });
  return {
    async save(target, body) {
      let bytes = 0;
      for await (const chunk of body) bytes += chunk.byteLength;
      return saved(target, bytes);
    },
    keep: (target, bytes) => saved(target, bytes.byteLength),
    stage: async () => undefined,
    plan: (target, bytes) => ({ path: `/media/task-${target.taskId}.png`, sha256: 'f'.repeat(64), bytes: bytes.byteLength, contentType: target.contentType }),
    async record(task, result) {
      records.set(task.id, result);
    },
    find: async (task) => {
      const record = records.get(task.id);
      return record && record.idempotencyKey === task.idempotencyKey ? { ...record, missing: 0 } : null;
    },
    has: (task) => records.get(task.id)?.idempotencyKey === task.idempotencyKey,
  };
}

/** A receipt journal in memory. */
export function memoryReceipts(): ReceiptLog & { receipts: Receipt[] } {
  const receipts: Receipt[] = [];
  return { receipts, append: (r) => void receipts.push(r), all: () => [...receipts], settle: () => undefined, archived: () => [] };
}

/** What the recovery sweep reads besides the table, with nothing left on disk. */
export function sweepOf(store: Store): SweepPorts & { receipts: ReturnType<typeof memoryReceipts> } {
  return { repo: store.tasks, transaction: (fn) => store.transaction(fn), receipts: memoryReceipts(), hasResult: () => false, pollable: () => true };
}
