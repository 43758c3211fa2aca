import { ProviderHttp } from './providerHttp.ts';
import { entryFor } from '../pricing/catalogue.ts';
import { falQuote } from '../pricing/falQuote.ts';
import { FAL_IMAGE_SIZES, FAL_SIZE_SIDE_MAX } from '../pricing/imageSizes.ts';
import type { RemoteRef, Task } from '../domain/tasks/model.ts';
import type { AdapterConfig } from './config.ts';
import { PollError, SubmitError, type CancelOutcome, type Listing, type Money, type PollResult, type PreparedRequest, type ProviderAdapter, type ProviderCapabilities, type ProviderOutput, ResultMissing, type SubmitOptions, type SubmitResult } from './port.ts';
import { InvalidInput } from './invalidInput.ts';
import { klingDuration, KLING_DURATIONS } from './clipDurations.ts';
import { modelFor, type ModelSpec } from './models.ts';
import { checkInput, type InputSchema } from './schema.ts';
import { collectOutputs, obj, requireKey } from './shared.ts';
import { falLookup } from './falListing.ts';
import { falUpload, FAL_REST_URL } from './falStorage.ts';
import { falFailure, falRecheckMs } from './falErrors.ts';
import { FAL_QUEUE_URL, falRequestUrls, type FalRequestUrls } from './falUrls.ts';
import { downloadExpiring, saysNothingIsThere } from './expiringFiles.ts';

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
/**
 * FLUX.1 [schnell]'s own ranges, from fal's input schema for fal-ai/flux/schnell
 * (fal.ai/docs/model-api-reference/image-generation-api/flux-schnell): num_inference_steps "Default value: 4,
 * Range: 1 to 12"; guidance_scale "Range: 1 to 20".
 */
const SCHNELL: InputSchema = {
  ...IMAGE,
  num_inference_steps: { type: 'integer', min: 1, max: 12 },
  guidance_scale: { type: 'number', min: 1, max: 20 },
};
/**
 * Kling's text limits, from fal's OpenAPI schema for fal-ai/kling-video/v2.1/standard/image-to-video: `prompt`
 * and `negative_prompt` have maxLength 2500 (fal-js endpoints.ts repeats "Max 2500 characters" for its other
 * Kling inputs, which the generated types otherwise drop).
 */
const KLING_TEXT_MAX = 2500;
/** The studio asks for a clip in seconds; Kling's own `"5"` or `"10"` is taken as given. */
const CLIP: InputSchema = {
  prompt: { ...PROMPT, maxLength: KLING_TEXT_MAX },
  // "Models on fal accept file inputs as URLs ... Some models also accept data URIs", and "the model's runner
  // downloads the file from that URL" (fal.ai/docs/documentation/model-apis/fal-cdn).
  image_url: { type: 'string', required: true, format: 'file-url', hint: 'the picture the clip starts from' },
  duration: { type: 'either', of: [{ type: 'number', min: 0.1, max: 3600 }, { type: 'string', oneOf: KLING_DURATIONS }] },
  negative_prompt: { type: 'string', maxLength: KLING_TEXT_MAX },
  // "Range: 0 to 1" (fal's schema for the endpoint, as fal.ai/models/fal-ai/kling-video/v2.1/standard/image-to-video/llms.txt lists it).
  cfg_scale: { type: 'number', min: 0, max: 1 },
};

/** fal endpoint ids, as on each model's page at fal.ai/models. */
const MODELS: ModelSpec[] = [
  { id: 'fal-ai/flux/dev', kind: 'image', title: 'FLUX.1 [dev]', inputs: IMAGE },
  { id: 'fal-ai/flux/schnell', kind: 'image', title: 'FLUX.1 [schnell]', inputs: SCHNELL },
  // "This generation takes approximately 5m" (fal.ai/models/fal-ai/kling-video/v2.1/pro/image-to-video; the
  // standard endpoint's page states no time, and runs the same model).
  { id: 'fal-ai/kling-video/v2.1/standard/image-to-video', kind: 'clip', title: 'Kling 2.1 Standard, image to video', inputs: CLIP, runMs: 5 * 60_000 },
];

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
  return { ...rest, duration: klingDuration(duration) };
}

/**
 * fal's queue API. Submits go to queue.fal.run once; the status and response URLs that the submit returns
 * are kept with the request id and followed, as fal asks. No `x-fal-no-retry` is sent: it only stops fal's
 * queue from retrying, under the same request id, a request that failed on a server error (a 503, a 504, a
 * lost connection; "up to 10 times", and "Failed requests that return 5xx status codes are not billed":
 * docs.fal.ai/model-apis/model-endpoints/reliability), so it protects no money and turns a passing fault
 * into a failed task.
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
      'fal lists requests by endpoint once they have ended, with the status success, error or user_error, sorted by when they ended; ' +
      'a request still queued or running is not listed yet',
    lookupListsOnceEnded: true,
    // "Retries happen transparently, up to 10 attempts, before the request is marked as failed"
    // (fal.ai/docs/documentation/serverless/reliability/retries): one request may run that many times.
    runsAtMost: 10,
    pollById: true,
    // The queue keeps a result 1 hour, or 6 minutes from 10 KB (fal.ai/docs/inference-api/queue/result); the files it
    // names are on fal's CDN, kept on a retention of their own (fal.ai/docs/model-apis/data-retention).
    filesOutliveResult: true,
    cancel: true,
    // A cancel answered OK removed the request from the queue (fal.ai/docs/inference-api/queue/cancel), and "You pay
    // only for successful outputs, and you are never charged for ... time spent waiting in the queue"
    // (fal.ai/docs/documentation/model-apis/pricing).
    cancelledUnbilled: true,
    quote: 'endpoint',
    billing: null,
    neverBilled: null,
    models: MODELS,
  };
  private readonly queue: ProviderHttp;
  private readonly queueBase: string;
  /** A failure each request's result URL answered once, by request id, until it is answered again or not (falRecheckMs). */
  private readonly failedOnce = new Map<string, string>();
  private readonly api: ProviderHttp;
  private readonly rest: ProviderHttp;

  constructor(private readonly config: AdapterConfig) {
    const headers: Record<string, string> = config.key ? { authorization: `Key ${config.key}` } : {};
    const base = config.baseUrl ?? FAL_QUEUE_URL;
    this.queueBase = base;
    this.queue = new ProviderHttp({
      name: 'fal',
      baseUrl: base,
      headers,
      timeouts: config.timeouts,
      requestIdHeader: 'x-fal-request-id',
      keyVariable: 'FAL_KEY',
      accountRefusal: lockedAccount,
    });
    // An overridden base URL (a local stand-in) serves the platform API too.
    this.api = new ProviderHttp({ name: 'fal', baseUrl: config.baseUrl ?? FAL_API_URL, headers, timeouts: config.timeouts, keyVariable: 'FAL_KEY', accountRefusal: lockedAccount });
    this.rest = new ProviderHttp({ name: 'fal', baseUrl: config.baseUrl ?? FAL_REST_URL, headers, timeouts: config.timeouts, keyVariable: 'FAL_KEY', accountRefusal: lockedAccount });
  }

  prepare(task: Pick<Task, 'kind' | 'model' | 'input'>): PreparedRequest {
    const model = modelFor('fal', MODELS, task.kind, task.model);
    requireKey(this.config, 'fal', 'FAL_KEY');
    const input = task.kind === 'clip' ? klingInput(checkInput(model.inputs, task.input)) : checkInput(model.inputs, task.input);
    return { kind: task.kind, model: task.model, input, body: JSON.stringify(input) };
  }

  /** fal's price for the endpoint, scaled to the size or length this input asks for (falQuote.ts); null where it cannot be. */
  async quote(request: PreparedRequest, signal?: AbortSignal): Promise<Money | null> {
    const { json } = await this.api.get(`/v1/models/pricing?endpoint_id=${encodeURIComponent(request.model)}`, signal);
    const price = (obj(json).prices as unknown[] | undefined)?.map((p) => obj(p)).find((p) => p.endpoint_id === request.model);
    if (!price || typeof price.unit !== 'string' || typeof price.unit_price !== 'number') return null;
    const line = { unit: price.unit, unitPrice: price.unit_price, currency: String(price.currency ?? 'USD') };
    const quote = falQuote(line, request.kind, request.input, entryFor('fal', request.model, request.kind));
    return quote && { amount: quote.amount, currency: quote.currency, how: quote.how };
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

  private urls(remote: RemoteRef) {
    return falRequestUrls(remote, this.queueBase);
  }

  /**
   * A failed status or result call is asked again later, unless the result answer carries fal's own error markers
   * twice in a row (falErrors.ts). fal keeps a result for 1 hour after the request completes, 6 minutes when it is
   * 10 KB or larger (fal.ai/docs/inference-api/queue/result), but documents no answer that says it has expired: a
   * completed request whose result answers 404 or 410 is ResultMissing. The engine then asks for the files the result
   * named (kept when it was received), and asks again in rounds spanning at least that hour before it calls the
   * result expired (collectRetry.ts). COMPLETED: "Result is stored and ready for retrieval"
   * (docs.fal.ai/documentation/deployment/requests).
   */
  async poll(remote: RemoteRef, signal?: AbortSignal): Promise<PollResult> {
    const { alternate, ...first } = this.urls(remote);
    let urls: FalRequestUrls = first;
    let status = await this.queue.get(urls.status, signal, 'GET', undefined, alternate ? [404] : []);
    if (status.status === 404 && alternate) {
      urls = alternate;
      status = await this.queue.get(urls.status, signal);
    }
    return this.outcome(remote.requestId, obj(status.json), urls, signal);
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
      const answer = await this.outcome(remote.requestId, obj(event), urls, signal);
      if (answer.state !== 'pending') return answer;
      onProgress(null);
    }
    return null;
  }

  private async outcome(requestId: string, body: Record<string, any>, urls: { response: string }, signal?: AbortSignal): Promise<PollResult> {
    if (body.status === 'IN_QUEUE' || body.status === 'IN_PROGRESS') return { state: 'pending', progress: null };
    if (body.status !== 'COMPLETED') throw new PollError(`fal reported an unknown status ${JSON.stringify(body.status)}`);
    // COMPLETED says only that the request ended: whether it failed, the result URL's answer says (falErrors.ts).
    const result = await this.queue.answer(urls.response, signal);
    if (result.status < 200 || result.status >= 300) {
      const type = result.headers['x-fal-error-type'];
      const failed = falFailure(result.status, result.json, Array.isArray(type) ? type[0] : type);
      // Completed, yet nothing at its result URL: "fal keeps the result for 1 hour after the request completes. If
      // the result is 10 KB or larger, fal keeps it for 6 minutes" (fal.ai/docs/inference-api/queue/result).
      if (!failed && saysNothingIsThere(result.status)) {
        throw new ResultMissing(`fal said the request completed, but its result answered HTTP ${result.status}`, urls.response, result.status);
      }
      if (!failed) throw this.queue.failure(result);
      if (this.failedOnce.get(requestId) === failed.error) {
        this.failedOnce.delete(requestId);
        return { state: 'failed', ...failed, costActual: null };
      }
      // Heard once: a passing answer, or the request's end. Polling asks again after the pause, and decides then.
      this.failedOnce.set(requestId, failed.error);
      throw new PollError(`${failed.error}; asking once more before calling it the request's end`, falRecheckMs(result.status));
    }
    this.failedOnce.delete(requestId);
    const outputs = collectOutputs(result.json);
    if (outputs.length === 0) throw new PollError('fal sent a result with no file in it');
    // fal reports no cost per request: its usage endpoint (GET /v1/models/usage) needs an admin key and sums
    // usage per endpoint and time bucket (fal.ai/docs/platform-apis/v1/models/usage.md), and per-request
    // billable units are only for an endpoint's owner (fal.ai/docs/platform-apis/v1/serverless/requests/by-endpoint.md).
    // So the estimate stands, shown as an estimate.
    return { state: 'succeeded', result: { outputs, costActual: null } };
  }

  /**
   * A result's files are on fal's CDN, where "Expired files are permanently deleted and cannot be recovered"
   * (fal.ai/docs/model-apis/data-retention): a file URL that answers that nothing is there may be one.
   */
  download(output: ProviderOutput, signal?: AbortSignal): Promise<AsyncIterable<Uint8Array>> {
    return downloadExpiring(this.queue, output, signal);
  }

  /**
   * fal's cancel. Its per-endpoint OpenAPI documents answer it with `{"success": boolean}` ("Whether the request
   * was cancelled successfully"); its queue reference names the outcomes OK (removed from the queue),
   * CANCELLATION_REQUESTED (it was running: the runner is only signalled, and may still finish), ALREADY_COMPLETED
   * and NOT_FOUND (fal.ai/docs/inference-api/queue/cancel), an already completed request answered with a 400.
   * `success: true` does not say whether the request was removed or only signalled, so it is taken as asked to
   * stop: it is still followed, and collected if it finishes. The reference documents no other answer (fal-js's
   * queue.cancel, libs/client/src/queue.ts, only throws on any non-2xx), so any other is said as fal not
   * cancelling it, never as a refused input (a cancel sends none), and the request is followed.
   */
  async cancel(remote: RemoteRef, signal?: AbortSignal): Promise<CancelOutcome> {
    const urls = this.urls(remote);
    let answer = await this.queue.answer(urls.cancel, signal, 'PUT');
    if (answer.status === 404 && urls.alternate) answer = await this.queue.answer(urls.alternate.cancel, signal, 'PUT');
    const body: Record<string, unknown> = answer.json && typeof answer.json === 'object' && !Array.isArray(answer.json) ? (answer.json as Record<string, unknown>) : {};
    if (body.status === 'ALREADY_COMPLETED') return 'finished';
    if (answer.status === 401 || answer.status === 403 || answer.status === 429 || answer.status >= 500) throw this.queue.failure(answer);
    if (answer.status < 200 || answer.status >= 300) {
      throw new PollError(`fal did not cancel request ${remote.requestId} (HTTP ${answer.status}: ${JSON.stringify(answer.json)?.slice(0, 200)}); it may have ended already`);
    }
    if (body.status === 'OK') return 'cancelled';
    if (body.status === 'CANCELLATION_REQUESTED' || body.success === true) return 'requested';
    if (body.success === false) throw new PollError(`fal did not cancel request ${remote.requestId} (it answered success: false); it may have ended already`);
    throw new PollError(`fal answered the cancel with ${JSON.stringify(answer.json)?.slice(0, 200)}`);
  }

  /** A start image goes to fal's storage, and the request names its URL (see falStorage.ts). */
  upload(file: { bytes: Uint8Array; contentType: string; name: string }, signal?: AbortSignal): Promise<string> {
    return falUpload(this.rest, file, signal);
  }

  /** fal's request history, which lists a request once it has ended (see falListing.ts). */
  lookup(window: { from: number; to: number }, request: PreparedRequest, signal?: AbortSignal): Promise<Listing> {
    return falLookup(this.api, window, request, signal);
  }
}
