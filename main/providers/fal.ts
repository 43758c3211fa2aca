import { ProviderHttp } from '../http/providerHttp.ts';
import { unitsOf, type PriceUnit } from '../pricing/catalogue.ts';
import { FAL_IMAGE_SIZES, FAL_SIZE_SIDE_MAX } from '../pricing/imageSizes.ts';
import { canonicalJson } from '../tasks/inputHash.ts';
import { toMicros, type RemoteRef, type Task } from '../tasks/model.ts';
import type { AdapterConfig } from './config.ts';
import { InvalidInput, PollError, SubmitError, type CancelOutcome, type Candidate, type Money, type PollResult, type PreparedRequest, type ProviderAdapter, type ProviderCapabilities, type ProviderOutput, type SubmitOptions, type SubmitResult } from './port.ts';
import { modelFor, type ModelSpec } from './models.ts';
import { checkInput, type InputSchema } from './schema.ts';
import { collectOutputs, obj, requireKey } from './shared.ts';

export const FAL_QUEUE_URL = 'https://queue.fal.run';
export const FAL_API_URL = 'https://api.fal.ai';

const PROMPT = { type: 'string', required: true, maxLength: 5000, hint: 'what to make, in words' } as const;
const SIDE = { type: 'integer', min: 1, max: FAL_SIZE_SIDE_MAX } as const;
/**
 * FLUX.1 [dev] and [schnell] inputs (fal-js libs/client/src/types/endpoints.ts FluxDevInput, FluxSchnellInput =
 * FluxDevInput; num_images 1 to 4: fal.ai/docs/model-api-reference/image-generation-api/flux-dev). Other
 * fields pass through as given.
 */
const IMAGE: InputSchema = {
  prompt: PROMPT,
  image_size: { type: 'either', of: [{ type: 'string', oneOf: Object.keys(FAL_IMAGE_SIZES) }, { type: 'object', fields: { width: SIDE, height: SIDE } }] },
  num_images: { type: 'integer', min: 1, max: 4 },
  seed: { type: 'integer', min: 0 },
  output_format: { type: 'string', oneOf: ['jpeg', 'png'] },
  acceleration: { type: 'string', oneOf: ['none', 'regular', 'high'] },
  enable_safety_checker: { type: 'boolean' },
};
/** Kling's durations, as strings (fal-js KlingVideoV2MasterImageToVideoInput, which v2.1 standard's input is). */
const KLING_DURATIONS = ['5', '10'] as const;
/** The studio asks for a clip in seconds; Kling's own `"5"` or `"10"` is taken as given. */
const CLIP: InputSchema = {
  prompt: PROMPT,
  image_url: { type: 'string', required: true, hint: 'the picture the clip starts from' },
  duration: { type: 'either', of: [{ type: 'number', min: 0.1, max: 3600 }, { type: 'string', oneOf: KLING_DURATIONS }] },
  negative_prompt: { type: 'string' },
  cfg_scale: { type: 'number' },
};

/** fal endpoint ids, as on each model's page at fal.ai/models. */
const MODELS: ModelSpec[] = [
  { id: 'fal-ai/flux/dev', kind: 'image', title: 'FLUX.1 [dev]', inputs: IMAGE },
  { id: 'fal-ai/flux/schnell', kind: 'image', title: 'FLUX.1 [schnell]', inputs: IMAGE },
  { id: 'fal-ai/kling-video/v2.1/standard/image-to-video', kind: 'clip', title: 'Kling 2.1 Standard, image to video', inputs: CLIP },
];

/**
 * The request error types whose typical status is 500 or above (fal.ai/docs/documentation/model-apis/request-errors):
 * "Server errors (HTTP 500+) are never charged" (fal.ai/docs/model-apis/faq). Any other failure (a model's own
 * error, such as a 422 on its input or content, `client_cancelled`, `bad_request`, or no type) "may still be
 * charged if a runner spent GPU time processing the request before the error was detected" (same FAQ), which
 * fal's status answer does not say.
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
 * A locked account: "When your credit balance drops below your account's lock threshold, your account is
 * locked and API requests will be rejected" (fal.ai/docs/model-apis/faq, which gives no status or body). The
 * answer's shape is known only from third-party reports: HTTP 403 with `{"detail": "User is locked. Reason:
 * Exhausted balance. Top up your balance at fal.ai/dashboard/billing."}`, or "Reason: Admin lock. Please
 * contact support@fal.ai." (wavespeed.ai/blog/ai-guides/fal-ai-user-is-locked-admin-lock-fix/), so it is
 * matched by its words on any 4xx.
 */
function lockedAccount(status: number, body: unknown): string | null {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (status < 400 || status >= 500 || typeof detail !== 'string' || !/user is locked/i.test(detail)) return null;
  const next = /exhausted balance|top.?up/i.test(detail) ? 'add credit at fal.ai/dashboard/billing' : 'see fal.ai/dashboard/billing, or contact fal';
  return `fal has locked this account and refuses every request until it is unlocked (HTTP ${status}: ${detail.slice(0, 300)}); ${next}, then generate again`;
}

/**
 * Kling's input as it is sent: a duration in seconds becomes the shortest Kling duration that covers it,
 * capped at "10" (the longest it makes), so the estimate prices what is sent. Kling's input has no `seed`
 * (fal-js KlingVideoV2MasterImageToVideoInput), so the studio's generic one is left out.
 */
function klingInput(input: Record<string, unknown>): Record<string, unknown> {
  const { seed: _seed, duration, ...rest } = input;
  if (typeof duration === 'string' || duration === undefined) return { ...rest, ...(duration === undefined ? {} : { duration }) };
  if (typeof duration !== 'number') throw new InvalidInput(`"duration" must be a number of seconds or one of ${KLING_DURATIONS.join(', ')}`);
  return { ...rest, duration: KLING_DURATIONS.find((d) => Number(d) >= duration) ?? KLING_DURATIONS.at(-1)! };
}

/** fal's pricing units, as the catalogue counts them. */
const UNITS: Record<string, PriceUnit> = { image: 'image', images: 'image', megapixel: 'megapixel', megapixels: 'megapixel', second: 'second', seconds: 'second', video_second: 'second', video_seconds: 'second' };

/**
 * fal's queue API. Submits go to queue.fal.run with `x-fal-no-retry: 1`, so fal's own queue never resends
 * them either; the status and response URLs that the submit returns are kept with the request id and
 * followed, as fal asks.
 *
 * fal says failed requests that end in a 5xx are not billed (docs.fal.ai/model-apis/model-endpoints/reliability),
 * not that a 5xx answer to the submit means nothing was queued: a gateway 502/504 or a 500 can follow the
 * queueing. So a 5xx on submit is "maybe applied", and the `x-fal-request-id` header, which fal's answers
 * carry once a request reached fal (fal-js libs/client/src/response.ts reads it), names the request so it
 * can be polled. A 4xx answer to the submit names no queued request: the queue refused it before any runner
 * saw it, and fal's FAQ charges a client error only "if a runner spent GPU time processing the request", so
 * it is refused and not charged; a model's own 422 comes later, as a failed request (see `poll`).
 */
export class FalAdapter implements ProviderAdapter {
  readonly id = 'fal';
  readonly capabilities: ProviderCapabilities = {
    mode: 'async',
    idempotencyHeader: null,
    lookup: true,
    lookupLists:
      'fal lists requests by endpoint with the status success, error or user_error, sorted by when they ended; its documentation ' +
      'does not say whether a request still queued or running is listed, so one that has not ended may not show yet',
    pollById: true,
    cancel: true,
    quote: 'endpoint',
    billing: null,
    neverBilled: null,
    models: MODELS,
  };
  private readonly queue: ProviderHttp;
  private readonly api: ProviderHttp;

  constructor(private readonly config: AdapterConfig) {
    const headers: Record<string, string> = config.key ? { authorization: `Key ${config.key}` } : {};
    const base = config.baseUrl ?? FAL_QUEUE_URL;
    this.queue = new ProviderHttp({
      name: 'fal',
      baseUrl: base,
      headers,
      timeouts: config.timeouts,
      submitHeaders: { 'x-fal-no-retry': '1' },
      requestIdHeader: 'x-fal-request-id',
      keyVariable: 'FAL_KEY',
      accountRefusal: lockedAccount,
    });
    // An overridden base URL (a local stand-in) serves the platform API too.
    this.api = new ProviderHttp({ name: 'fal', baseUrl: config.baseUrl ?? FAL_API_URL, headers, timeouts: config.timeouts, keyVariable: 'FAL_KEY', accountRefusal: lockedAccount });
  }

  prepare(task: Pick<Task, 'kind' | 'model' | 'input'>): PreparedRequest {
    const model = modelFor('fal', MODELS, task.kind, task.model);
    requireKey(this.config, 'fal', 'FAL_KEY');
    const input = task.kind === 'clip' ? klingInput(checkInput(model.inputs, task.input)) : checkInput(model.inputs, task.input);
    return { kind: task.kind, model: task.model, input, body: JSON.stringify(input) };
  }

  /** fal's price for the endpoint, times the units this input asks for. */
  async quote(request: PreparedRequest, signal?: AbortSignal): Promise<Money | null> {
    const { json } = await this.api.get(`/v1/models/pricing?endpoint_id=${encodeURIComponent(request.model)}`, signal);
    const price = (obj(json).prices as unknown[] | undefined)?.map((p) => obj(p)).find((p) => p.endpoint_id === request.model);
    const unit = price && UNITS[String(price.unit)];
    if (!price || !unit || typeof price.unit_price !== 'number') return null;
    return { amount: toMicros(price.unit_price * unitsOf(unit, request.kind, request.input)), currency: String(price.currency ?? 'USD') };
  }

  async submit(request: PreparedRequest, options: SubmitOptions): Promise<SubmitResult> {
    const res = await this.queue.submit(`/${request.model}`, request.body as string, { 'content-type': 'application/json' }, options);
    const body = await this.queue.acceptedJson(res);
    const requestId = body.request_id;
    if (typeof requestId !== 'string' || !requestId) {
      throw new SubmitError({ kind: 'maybe_applied', message: 'fal accepted the request but sent no request_id' });
    }
    const handle: Record<string, string> = {};
    for (const key of ['status_url', 'response_url', 'cancel_url']) {
      if (typeof body[key] === 'string') handle[key] = body[key] as string;
    }
    return { requestId, handle, quote: null, result: null };
  }

  /** fal's documented URLs name only owner/app, for a request adopted without the URLs its submit gave. */
  private urls(remote: RemoteRef) {
    const [owner, app] = remote.model.split('/');
    const base = `/${owner}/${app}/requests/${encodeURIComponent(remote.requestId)}`;
    return {
      status: remote.handle?.status_url ?? `${base}/status`,
      response: remote.handle?.response_url ?? base,
      cancel: remote.handle?.cancel_url ?? `${base}/cancel`,
    };
  }

  /**
   * Any failed status or result call, a 404 included, is asked again later: fal keeps a result for 1 hour
   * after the request completes, 6 minutes when it is 10 KB or larger (fal.ai/docs/inference-api/queue/result),
   * but documents no answer that says a result has expired, so none is taken as one.
   */
  async poll(remote: RemoteRef, signal?: AbortSignal): Promise<PollResult> {
    const urls = this.urls(remote);
    return this.outcome(obj((await this.queue.get(urls.status, signal)).json), urls, signal);
  }

  /**
   * fal's status stream, `GET {status_url}/stream` (fal.ai/docs/inference-api/queue/status-stream; fal-js
   * libs/client/src/queue.ts streamStatus builds `/requests/{id}/status/stream?logs=0`): each event's data is a
   * status object with the same fields as the status answer, the stream closes after COMPLETED, and a comment
   * line comes every 15 s to keep it open. Logs are not asked for (logs=0): only the status is read.
   */
  async watch(remote: RemoteRef, onProgress: (progress: number | null) => void, signal: AbortSignal): Promise<PollResult | null> {
    const urls = this.urls(remote);
    const [path, query] = urls.status.split('?');
    const q = new URLSearchParams(query);
    q.set('logs', '0');
    for await (const event of this.queue.events(`${path}/stream?${q}`, signal)) {
      const answer = await this.outcome(obj(event), urls, signal);
      if (answer.state !== 'pending') return answer;
      onProgress(null);
    }
    return null;
  }

  private async outcome(body: Record<string, any>, urls: { response: string }, signal?: AbortSignal): Promise<PollResult> {
    if (body.status === 'IN_QUEUE' || body.status === 'IN_PROGRESS') return { state: 'pending', progress: null };
    if (body.status !== 'COMPLETED') throw new PollError(`fal reported an unknown status ${JSON.stringify(body.status)}`);
    // fal has no FAILED status: a failure is COMPLETED with an error, fal's own definitive answer.
    if (body.error) {
      const charged = NEVER_CHARGED_ERRORS.has(String(body.error_type)) ? 'no' : 'maybe';
      return { state: 'failed', error: `fal: ${String(body.error)}${body.error_type ? ` (${String(body.error_type)})` : ''}`, costActual: null, charged };
    }
    const result = await this.queue.get(urls.response, signal);
    const outputs = collectOutputs(result.json);
    if (outputs.length === 0) throw new PollError('fal sent a result with no file in it');
    // fal reports no cost per request: its usage endpoint (GET /v1/models/usage) needs an admin key and sums
    // usage per endpoint and time bucket (fal.ai/docs/platform-apis/v1/models/usage.md), and per-request
    // billable units are only for an endpoint's owner (fal.ai/docs/platform-apis/v1/serverless/requests/by-endpoint.md).
    // So the estimate stands, shown as an estimate.
    return { state: 'succeeded', result: { outputs, costActual: null } };
  }

  download(output: ProviderOutput, signal?: AbortSignal): Promise<AsyncIterable<Uint8Array>> {
    return this.queue.download(output, signal);
  }

  /**
   * fal removes a queued request (OK); for one in progress it only signals the runner
   * (CANCELLATION_REQUESTED), and the app may still finish it; ALREADY_COMPLETED means it ended
   * (fal.ai/docs/inference-api/queue/cancel).
   */
  async cancel(remote: RemoteRef): Promise<CancelOutcome> {
    const { json } = await this.queue.get(this.urls(remote).cancel, undefined, 'PUT');
    const status = obj(json).status;
    if (status === 'OK') return 'cancelled';
    if (status === 'CANCELLATION_REQUESTED') return 'requested';
    if (status === 'ALREADY_COMPLETED') return 'finished';
    throw new PollError(`fal answered the cancel with ${JSON.stringify(status)}`);
  }

  /**
   * fal's request history (fal.ai/docs/platform-apis/v1/models/requests/by-endpoint.md): filtered by a time range,
   * by status `success`, `error` or `user_error` only, and sorted by end time. The docs name no queued or running
   * status and do not say whether such a request is listed: read plainly, only a request that has ended is sure
   * to be, so a lookup that finds nothing is asked again later before anyone is told it was never accepted.
   * `sent_at` is when the request reached fal (before `started_at` in the docs' example).
   */
  async lookup(window: { from: number; to: number }, request: PreparedRequest, signal?: AbortSignal): Promise<Candidate[]> {
    const wanted = canonicalJson(request.input);
    const found: Candidate[] = [];
    let cursor: string | null = null;
    do {
      const q = new URLSearchParams({
        endpoint_id: request.model,
        start: new Date(window.from).toISOString(),
        end: new Date(window.to).toISOString(),
        expand: 'payloads',
        limit: '100',
      });
      if (cursor) q.set('cursor', cursor);
      const page = obj((await this.api.get(`/v1/models/requests/by-endpoint?${q}`, signal)).json);
      for (const item of (page.items as unknown[] | undefined) ?? []) {
        const r = obj(item);
        found.push({
          requestId: String(r.request_id),
          createdAt: Date.parse(String(r.sent_at ?? r.started_at)),
          status: r.status_code ? `HTTP ${r.status_code}` : 'unknown',
          inputMatches: r.json_input !== undefined && canonicalJson(r.json_input) === wanted,
          // Payloads are not kept when storage is off for the account or the request (X-Fal-Store-IO: 0).
          ...(r.json_input === undefined ? { inputGone: 'fal kept no copy of its input (payload storage is off for this account)' } : {}),
        });
      }
      cursor = page.has_more && typeof page.next_cursor === 'string' ? page.next_cursor : null;
    } while (cursor && found.length < 1_000);
    return found;
  }
}
