import type { SubmitFailure } from '../domain/submitOutcome.ts';
import type { PlanPrices } from '../pricing/catalogue.ts';
import type { BilledUnits, Charged, Kind, RemoteRef, ReportedUnit, Task } from '../domain/tasks/model.ts';
import type { ModelSpec } from './models.ts';

/** Money in micro-units (1 USD = 1,000,000). */
export interface Money {
  amount: number;
  currency: string;
  /** How a quote reached the amount, for the estimate's source line. */
  how?: string;
}

/** What an adapter can do, declared, so the engine never assumes. */
export interface ProviderCapabilities {
  /** async: a request id comes back before the result; sync: nothing until the result. */
  mode: 'async' | 'sync';
  /** The header in which the provider honours an idempotency key, if it does. */
  idempotencyHeader: string | null;
  /** The provider can list past requests, so an unknown outcome can be reconciled. */
  lookup: boolean;
  /** Which requests that listing shows, and what it cannot show, in words from the provider's docs, for the person. */
  lookupLists?: string;
  /** The listing shows a request only once it has ended: before its longest run and queue time, absence proves nothing. */
  lookupListsOnceEnded?: boolean;
  /** How many times the provider itself may run one request (its own retries, under the same id), where it says. */
  runsAtMost?: number;
  /**
   * A request id alone is enough to ask for the request's outcome and collect its result later (a queue's
   * status URL, a history entry). When true, an id heard before the answer is whole is recorded as
   * SUBMITTED at once and polled; when false it is kept on the row for a person, and a lost answer is unknown.
   */
  pollById: boolean;
  /**
   * The result's files stay at their URLs longer than the answer that names them, which may be gone before they are
   * saved: their URLs are kept with the task once received, and asked for when that answer is gone (keptResult.ts).
   */
  filesOutliveResult?: boolean;
  cancel: boolean;
  /** A request its cancel stopped before it ran (CancelOutcome 'cancelled') is documented as never billed. */
  cancelledUnbilled?: boolean;
  /** Where the estimate comes from: a quote the adapter asks for, the submit's answer, or the catalogue. */
  quote: 'endpoint' | 'submit' | 'catalogue';
  /** Where the billed figure comes from, in words, or null when the provider gives none per request. */
  billing: string | null;
  /** Failures the provider documents as never billed, in words (the adapter marks them as it meets them). */
  neverBilled: string | null;
  /** The models it sends to; a task naming any other is refused before anything is sent. */
  models: readonly ModelSpec[];
}

/** A request built and validated in full before the boundary mark; the adapter alone reads `body`. */
export interface PreparedRequest {
  kind: Kind;
  model: string;
  /** The model input as it will be sent, for matching during reconciliation. */
  input: Record<string, unknown>;
  body: unknown;
}

/** A result file: at a URL to download, or, for synchronous providers, already in hand. */
export interface ProviderOutput {
  url: string | null;
  bytes?: Uint8Array;
  contentType: string | null;
}

/**
 * What a finished request cost, worked out from what the provider reported for it (a cost field, the
 * characters or tokens billed, the outputs made), with how; null where the provider reports nothing per
 * request, and then the estimate stands, shown as an estimate.
 */
export interface ReportedCost extends Money {
  source: string;
  /**
   * What the provider reported: 'money' or 'credit' where it reported its bill, else the count it bills by ('second',
   * 'image', 'token') that the amount was priced from at the catalogue's price (see domain/costBasis.ts).
   */
  reported: ReportedUnit;
  /** The credits, seconds, images or tokens the provider reported, which the amount was worked out from. */
  units?: BilledUnits;
}

export interface ProviderResult {
  outputs: ProviderOutput[];
  costActual: ReportedCost | null;
  /** Why costActual is null though the provider reported what it bills by (a reading that cannot be trusted). */
  costWhy?: string;
  /** A small text answer, kept in the task's history too, where every machine reads it (keptAnswer.ts). */
  answer?: string;
}

export interface SubmitResult {
  requestId: string;
  /** The request's other name, where the answer gives one (ElevenLabs: its history item id), kept on the row beside it. */
  alias?: string | null;
  /** Anything else needed to reach the request again, kept on the row with the id. */
  handle: Record<string, string> | null;
  quote: Money | null;
  /** Synchronous providers answer with the result itself. */
  result: ProviderResult | null;
}

export type PollResult =
  | { state: 'pending'; progress: number | null }
  | { state: 'succeeded'; result: ProviderResult }
  /** `charged`: whether the provider bills this failure, as its documentation says. */
  | { state: 'failed'; error: string; costActual: ReportedCost | null; charged: Charged; answer?: string };

/** A request found at the provider that might be the one an unknown outcome left behind. */
export interface Candidate {
  requestId: string;
  createdAt: number;
  status: string;
  inputMatches: boolean;
  /** Why the input could not be compared (the provider no longer keeps it): then only model and time match. */
  inputGone?: string;
  /** The other ids the provider gives the same request (an ElevenLabs history item id beside its request id). */
  aliases?: string[];
}

/**
 * What a lookup read. `cut` says, in words, why it is not the whole window (the listing had more than a lookup
 * reads): then a request absent from it may still be in the part not read.
 */
export type Listing = Candidate[] & { cut?: string };

export interface SubmitOptions {
  idempotencyKey: string;
  signal?: AbortSignal;
  /** Synchronous and never throwing: the engine journals the id and writes it to the row. */
  onRequestId?: (requestId: string) => void;
}

export interface ProviderAdapter {
  readonly id: string;
  readonly capabilities: ProviderCapabilities;
  /** Prices the person set for their plan (ElevenLabs' price per credit), which the catalogue's estimate uses. */
  readonly prices?: PlanPrices;
  /** Builds the request; throws InvalidInput with a message a person can act on. */
  prepare(task: Pick<Task, 'kind' | 'model' | 'input'>): PreparedRequest;
  /** The provider's own price for this request, where it has a quote endpoint. */
  quote?(request: PreparedRequest, signal?: AbortSignal): Promise<Money | null>;
  /**
   * Throws SubmitError, classified by what is known about whether the request was applied. Calls
   * `onRequestId` the moment the provider names the request (a response header, before any body is read),
   * on any answer that may mean the request was accepted, so the id survives a body that never arrives.
   */
  submit(request: PreparedRequest, options: SubmitOptions): Promise<SubmitResult>;
  /** Throws PollError for a passing problem (asking again later is free). */
  poll(remote: RemoteRef, signal?: AbortSignal): Promise<PollResult>;
  /**
   * Follows the provider's status stream until the request ends, passing on each progress report on the way
   * (saved, it renews the lease). Returns the outcome, as `poll` would; null when the stream closed before the
   * request ended. Throws PollError when the stream could not be followed. Either way the engine then polls.
   */
  watch?(remote: RemoteRef, onProgress: (progress: number | null) => void, signal: AbortSignal): Promise<PollResult | null>;
  download(output: ProviderOutput, signal?: AbortSignal): Promise<AsyncIterable<Uint8Array>>;
  /** Throws when the provider could not be asked or refused; otherwise says what became of the request. */
  cancel?(remote: RemoteRef, signal?: AbortSignal): Promise<CancelOutcome>;
  /**
   * Puts an input file in the provider's own storage and returns the URL a request names it by, where the provider
   * takes files that way (no charge: nothing is generated). Throws when it could not: an UploadRefused when asking
   * again would get the same answer.
   */
  upload?(file: { bytes: Uint8Array; contentType: string; name: string }, signal?: AbortSignal): Promise<string>;
  /**
   * Every name the provider gives the request named `requestId` (the one given among them), where it gives a request
   * more than one (ElevenLabs: a request id and a history item id); the one given alone when it knows no other yet.
   * Throws when the provider could not be asked.
   */
  aliases?(requestId: string, signal?: AbortSignal): Promise<string[]>;
  /** Requests created in a time window (ms since the epoch), compared with the request that was sent. */
  lookup?(window: { from: number; to: number }, request: PreparedRequest, signal?: AbortSignal): Promise<Listing>;
  /** What the account has used and may use this period, and what these requests need, where the provider tells an API key. */
  allowance?(requests: PreparedRequest[], signal?: AbortSignal): Promise<Allowance>;
}

/** An account's allowance for the period, in the provider's own unit (ElevenLabs: characters). */
export interface Allowance {
  unit: string;
  used: number;
  limit: number;
  /** What the requests asked about would use of it. */
  needed: number;
  /** When the count starts again (ms since the epoch), if the provider says. */
  resetsAt: number | null;
  /** Something the account's answer shows that the person's settings do not match (a plan other than the one set). */
  note?: string;
}

/**
 * cancelled: the provider stopped it (removed from its queue); requested: the provider took the cancel but
 * does not say it stopped the request (it may only pass it on to one running), so it may still finish and
 * charge; finished: it had already ended.
 */
export type CancelOutcome = 'cancelled' | 'requested' | 'finished';

export class SubmitError extends Error {
  constructor(readonly failure: SubmitFailure) {
    super(failure.message);
  }
}

/** A status or result request that did not get an answer this time; `status`: the HTTP status, when one came. */
export class PollError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** An answer larger than the studio reads: the same question gets the same answer, so a smaller one is asked. */
export class TooLargeAnswer extends PollError {}

/** An input file the provider's storage refused in a way that asking again will not change (a refused key, an answer with no place to put it). */
export class UploadRefused extends Error {}

/** A result the provider no longer has (expired or deleted): paid for, and gone. */
export class ResultGone extends Error {}

/**
 * The provider said the request completed, but an address of its result (`url`) answered that nothing is there.
 * Thrown only by an adapter whose provider documents that results expire; one such answer may pass, so the engine
 * asks again, backing off, in rounds that span at least the time the provider keeps a result before it calls the
 * result expired (see collectRetry.ts).
 */
export class ResultMissing extends PollError {
  constructor(
    message: string,
    readonly url: string,
    status: number,
  ) {
    super(message, undefined, status);
  }
}
