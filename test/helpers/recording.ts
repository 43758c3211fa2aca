import { Readable } from 'node:stream';
import type { SubmitFailure } from '../../main/engine/submitOutcome.ts';
import type { PollResult, PreparedRequest, ProviderAdapter, ProviderCapabilities, SubmitResult } from '../../main/providers/port.ts';
import { InvalidInput, SubmitError } from '../../main/providers/port.ts';
import type { OutputStore } from '../../main/ports.ts';
import type { RemoteRef, Task } from '../../main/tasks/model.ts';

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
      inputs: { image: { prompt: { type: 'string' as const, required: true } } },
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
      result: { outputs: [{ url: 'fake://out.png', contentType: 'image/png' }], costActual: { amount: 60_000, currency: 'USD' } },
    };
  }

  async download(): Promise<AsyncIterable<Uint8Array>> {
    return Readable.from([Buffer.from('png bytes')]);
  }
}

export const memoryOutputs: OutputStore = {
  async save(target, body) {
    let bytes = 0;
    for await (const chunk of body) bytes += chunk.byteLength;
    return { path: `/media/task-${target.taskId}.png`, sha256: 'f'.repeat(64), bytes };
  },
};
