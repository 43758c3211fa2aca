import type { SubmitFailure } from '../engine/submitOutcome.ts';
import type { Kind, Task } from '../tasks/model.ts';

/** Money in micro-units (1 USD = 1,000,000). */
export interface Money {
  amount: number;
  currency: string;
}

export interface ProviderCapabilities {
  /** async: a request id comes back before the result; sync: nothing until the result. */
  mode: 'async' | 'sync';
  /** The header in which the provider honours an idempotency key, if it does. */
  idempotencyHeader: string | null;
  /** The provider can list past requests, so an unknown outcome can be reconciled. */
  lookup: boolean;
  cancel: boolean;
  kinds: readonly Kind[];
}

/** A request built and validated in full before the boundary mark; the adapter alone reads `body`. */
export interface PreparedRequest {
  kind: Kind;
  model: string;
  body: unknown;
}

export interface ProviderOutput {
  url: string;
  contentType: string | null;
}

export interface ProviderResult {
  outputs: ProviderOutput[];
  costActual: Money | null;
}

export interface SubmitResult {
  requestId: string;
  quote: Money | null;
  /** Synchronous providers answer with the result itself. */
  result: ProviderResult | null;
}

export type PollResult =
  | { state: 'pending'; progress: number | null }
  | { state: 'succeeded'; result: ProviderResult }
  | { state: 'failed'; error: string; costActual: Money | null };

export interface ProviderAdapter {
  readonly id: string;
  readonly capabilities: ProviderCapabilities;
  /** Builds the request; throws InvalidInput with a message a person can act on. */
  prepare(task: Pick<Task, 'kind' | 'model' | 'input'>): PreparedRequest;
  /** Throws SubmitError, classified by what is known about whether the request was applied. */
  submit(request: PreparedRequest, options: { idempotencyKey: string; signal?: AbortSignal }): Promise<SubmitResult>;
  poll(requestId: string, signal?: AbortSignal): Promise<PollResult>;
  download(output: ProviderOutput, signal?: AbortSignal): Promise<AsyncIterable<Uint8Array>>;
  cancel?(requestId: string): Promise<void>;
}

export class InvalidInput extends Error {}

export class SubmitError extends Error {
  constructor(readonly failure: SubmitFailure) {
    super(failure.message);
  }
}
