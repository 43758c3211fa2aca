import type { Charged } from '../domain/tasks/model.ts';

/**
 * The request error types whose typical status is 500 or above (fal.ai/docs/documentation/model-apis/request-errors):
 * "Server errors (HTTP 500+) are never charged" (fal.ai/docs/model-apis/faq). The others there (`client_cancelled`,
 * `client_disconnected`, `bad_request`) are client errors, which "may still be charged if a runner spent GPU time
 * processing the request before the error was detected" (same FAQ).
 */
const NEVER_CHARGED_ERRORS = new Set([
  'request_timeout',
  'startup_timeout',
  'runner_scheduling_failure',
  'runner_connection_timeout',
  'runner_disconnected',
  'runner_connection_refused',
  'runner_connection_error',
  'runner_incomplete_response',
  'runner_server_error',
  'internal_error',
]);

/**
 * Answers that say nothing of the request itself, whatever they carry: a rate limit (fal-js retries a 429:
 * libs/client/src/retry.ts DEFAULT_RETRYABLE_STATUS_CODES), and a key or route problem (401, 403, 404), which
 * is passing (a key being changed) or for the person to fix; no request error type of fal's has one of these
 * as its status (fal.ai/docs/documentation/model-apis/request-errors).
 */
const NOT_THE_REQUEST = new Set([401, 403, 404, 429]);

/**
 * The statuses fal-js's result() asks again on, 3 more times, 1 s then doubling (libs/client/src/queue.ts
 * QUEUE_RETRY_CONFIG, retry.ts DEFAULT_RETRYABLE_STATUS_CODES and DEFAULT_RETRY_OPTIONS): a 502, 503 or 504 is
 * only fal's answer once it outlasts that.
 */
const SDK_RETRIED = new Set([502, 503, 504]);
const SDK_FIRST_RETRY_MS = 1_000;
const SDK_RETRY_WINDOW_MS = SDK_FIRST_RETRY_MS * (1 + 2 + 4);

export interface FalFailure {
  error: string;
  charged: Charged;
}

type Body = Record<string, unknown>;

/** One entry of a model error's `detail`: `{loc, msg, type, url?, ctx?}` (fal.ai/docs/documentation/model-apis/errors). */
function said(entry: Body): string {
  const where = Array.isArray(entry.loc) ? entry.loc.filter((l) => l !== 'body').join('.') : '';
  return where ? `${where}: ${String(entry.msg)}` : String(entry.msg);
}

/** A `detail` entry of fal's model error shape, all three fields present (a proxy's look-alike page rarely has them). */
function typedEntry(entry: unknown): boolean {
  const e = entry as Body | null;
  return !!e && typeof e === 'object' && Array.isArray(e.loc) && typeof e.msg === 'string' && typeof e.type === 'string';
}

/**
 * fal's own failure in the answer of a request's result URL, or null when the answer is not one (then it is a
 * passing problem, asked again later). A finished request's status is COMPLETED with `logs` and `metrics` only
 * (fal-js libs/client/src/types/common.ts CompletedQueueStatus; the QueueStatus of fal's per-endpoint OpenAPI
 * documents); its error comes from the result URL, in one of two shapes:
 * - a request error (timeouts, runner failures): a flat `{detail, error_type}` with the same type in the
 *   `X-Fal-Error-Type` header (fal.ai/docs/documentation/model-apis/request-errors); either marker counts;
 * - a model error: a 422 (fal-js libs/client/src/response.ts makes a 422 its ValidationError) with a `detail`
 *   array of `{loc, msg, type}` (fal.ai/docs/documentation/model-apis/errors), or with a string `detail`, which
 *   fal-js's ValidationError.fieldErrors also reads as the model's refusal.
 * A failure with a status of 500 or above is never charged; any other may be (fal.ai/docs/model-apis/faq).
 * One such answer is not the end yet: see `falRecheckMs`.
 */
export function falFailure(status: number, json: unknown, errorTypeHeader: string | undefined): FalFailure | null {
  if (status < 400 || NOT_THE_REQUEST.has(status)) return null;
  const body: Body = json && typeof json === 'object' && !Array.isArray(json) ? (json as Body) : {};
  const { detail } = body;
  const flat = detail === undefined || typeof detail === 'string';
  const errorType = (errorTypeHeader || undefined) ?? (flat && typeof body.error_type === 'string' && body.error_type ? body.error_type : undefined);
  if (errorType) {
    const words = typeof detail === 'string' && detail ? detail.slice(0, 300) : 'the request failed';
    return { error: `fal: ${words} (${errorType}, HTTP ${status})`, charged: status >= 500 || NEVER_CHARGED_ERRORS.has(errorType) ? 'no' : 'maybe' };
  }
  if (status !== 422) return null;
  const typed = Array.isArray(detail) && detail.length > 0 && detail.every(typedEntry);
  if (!typed && !(typeof detail === 'string' && detail)) return null;
  const words = (typed ? (detail as Body[]).map(said).join('; ') : String(detail)).slice(0, 300);
  return { error: `fal: the model refused the request: ${words} (HTTP 422)`, charged: 'maybe' };
}

/**
 * How long to wait before asking a result URL once more after it answered with a failure: a paid task ends
 * FAILED only when the same failure is answered again, as a request that really failed is (fal keeps its result
 * answer: fal.ai/docs/inference-api/queue/result), so one passing answer from fal's edge never loses a paid
 * result. A status fal-js retries gets the whole of fal-js's retry window; any other, fal-js's first retry delay.
 */
export function falRecheckMs(status: number): number {
  return SDK_RETRIED.has(status) ? SDK_RETRY_WINDOW_MS : SDK_FIRST_RETRY_MS;
}
