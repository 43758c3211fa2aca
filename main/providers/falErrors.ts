import type { Charged } from '../tasks/model.ts';

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

/**
 * fal's own failure in the answer of a request's result URL, or null when the answer carries none of fal's
 * markers (then it is a passing problem, asked again later). A finished request's status is COMPLETED with
 * `logs` and `metrics` only (fal-js libs/client/src/types/common.ts CompletedQueueStatus; the QueueStatus of
 * fal's per-endpoint OpenAPI documents); its error comes from the result URL, in one of two shapes:
 * - a request error (timeouts, runner failures): a flat `{detail, error_type}` with the same type in the
 *   `X-Fal-Error-Type` header (fal.ai/docs/documentation/model-apis/request-errors);
 * - a model error: a `detail` array of `{loc, msg, type}` (fal.ai/docs/documentation/model-apis/errors), as a 422
 *   for a refused input; fal-js (libs/client/src/response.ts ValidationError) also reads a 422 whose `detail` is
 *   a string as the model's refusal.
 * A failure with a status of 500 or above is never charged; any other may be (fal.ai/docs/model-apis/faq).
 */
export function falFailure(status: number, json: unknown, errorTypeHeader: string | undefined): FalFailure | null {
  if (status < 400) return null;
  const body: Body = json && typeof json === 'object' && !Array.isArray(json) ? (json as Body) : {};
  const errorType = typeof body.error_type === 'string' && body.error_type ? body.error_type : errorTypeHeader;
  if (errorType) {
    const detail = typeof body.detail === 'string' && body.detail ? body.detail.slice(0, 300) : 'the request failed';
    return { error: `fal: ${detail} (${errorType}, HTTP ${status})`, charged: status >= 500 || NEVER_CHARGED_ERRORS.has(errorType) ? 'no' : 'maybe' };
  }
  const { detail } = body;
  const typed = Array.isArray(detail) && detail.length > 0 && detail.every((d) => d && typeof d === 'object' && typeof (d as Body).msg === 'string');
  if (!typed && !(status === 422 && typeof detail === 'string' && detail)) return null;
  const words = (typed ? (detail as Body[]).map(said).join('; ') : String(detail)).slice(0, 300);
  return { error: `fal: the model refused the request: ${words} (HTTP ${status})`, charged: status >= 500 ? 'no' : 'maybe' };
}
