import { makeMedia, type Media } from '../../main/simulator/media.ts';
import type { ServerResponse } from 'node:http';
import { cutAfterHeaders, send, type Route } from './server.ts';

/**
 * Stand-ins for real providers that keep a ledger of what they would have charged, speaking each one's
 * documented format with real media bytes, so the engine's output checks run as they do for a creator.
 */
export interface Ledger {
  /** Request ids the provider accepted and would bill. */
  charged: string[];
}

let media: { png: Media; speech: Media } | undefined;

/** A real PNG and real speech audio, made once per test file with the bundled ffmpeg. */
export async function realMedia(): Promise<{ png: Media; speech: Media }> {
  media ??= { png: await makeMedia('image', { prompt: 'a fox' }), speech: await makeMedia('speech', { text: 'hello there' }) };
  return media;
}

export const FAL_MODEL = 'fal-ai/flux/dev';

/** Sends the headers at once, then the body a byte every 200 ms, for at most a minute. */
async function drip(res: ServerResponse, body: string, headers: Record<string, string>): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/json', ...headers });
  res.flushHeaders();
  for (let i = 0; i < Math.min(body.length, 300) && !res.destroyed; i++) {
    res.write(body[i]);
    await new Promise((r) => setTimeout(r, 200));
  }
  res.end();
}

/** Sends the headers at once and the body only after `ms`: an answer still arriving when the worker stops. */
async function sendHeld(res: ServerResponse, ms: number, body: unknown, headers: Record<string, string>): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/json', ...headers });
  res.flushHeaders();
  await new Promise((r) => setTimeout(r, ms));
  res.end(JSON.stringify(body));
}

export interface FalOptions {
  /** How the submit answers once the request is queued and charged: 200, or a 5xx carrying x-fal-request-id. */
  submitStatus?: number;
  submitDelayMs?: number;
  /** Headers (with the id) at once, the body this much later. */
  holdBodyMs?: number;
  /** The answer trickles, a byte every 200 ms, for a minute; `named`: its headers carry the request id. */
  drip?: { named: boolean };
  /** The image file at this index answers JSON instead of an image. */
  badFile?: number;
  /** fal's answer to a cancel: its HTTP status and the status in its body (fal.ai/docs/inference-api/queue/cancel). */
  cancelAnswer?: [number, 'OK' | 'CANCELLATION_REQUESTED' | 'ALREADY_COMPLETED' | 'NOT_FOUND'];
  /** The cancel answered with this body and 200 instead, such as `{success: true}`, the answer of fal's per-endpoint OpenAPI documents. */
  cancelBody?: Record<string, unknown>;
  /**
   * How a request's result URL answers once it is COMPLETED, when not with its images: `request`, fal's request error
   * (a 504 `{detail, error_type: "request_timeout"}` with X-Fal-Error-Type: fal.ai/docs/documentation/model-apis/request-errors);
   * `model`, a model error (a 422 with a `detail` array: fal.ai/docs/documentation/model-apis/errors); `gateway`, a bare 502
   * with none of fal's markers on the first ask, then the images.
   */
  resultError?: 'request' | 'model' | 'gateway';
  /** The first result ask of the n-th request submitted (1-based) answers with this status, body and headers; later ones with the images. */
  resultOnceOf?: (n: number) => [number, unknown, Record<string, string>?] | null;
  /** The origin the submit answer's status, response and cancel URLs point at, instead of this stand-in's. */
  urlsOn?: string;
  /**
   * Each request's first run fails on its runner (a 503). fal's queue retries it under the same request id, unbilled,
   * unless the submit carried `x-fal-no-retry` set to 1, true or yes; then the request ends with that request error,
   * `runner_disconnected` (docs.fal.ai/model-apis/model-endpoints/reliability).
   */
  runnerFailsOnce?: boolean;
  /** Result and file GETs that answer 401 first (a key being changed), per path. */
  resultUnauthorizedOnce?: boolean;
  images?: number;
  polls?: number;
  /** Whether to drop this submit's answer once the request is queued: the connection is cut before any byte of it. */
  dropAnswer?: () => boolean;
  /** Requests end this long after they were queued, polled or not (else after `polls` status calls). */
  jobMs?: number;
  /**
   * The status stream (`{status_url}/stream`): `cut` closes it after its first event, before the request ends;
   * `off` answers 404, as a stand-in for a stream that cannot be opened. Open by default.
   */
  stream?: 'cut' | 'off';
  /** How long each request takes, by its order of submission (1-based), overriding `jobMs`. */
  jobMsOf?: (n: number) => number;
}

/**
 * fal's queue API (fal.ai/docs/inference-api): the submit queues the request and names it in the body and
 * in `x-fal-request-id`; status is 202 while queued and 200 when COMPLETED; the result lists the images.
 */
export function falQueue(ledger: Ledger, png: Media, opts: FalOptions = {}): Route {
  let next = 0;
  const polls = new Map<string, number>();
  const refused = new Set<string>();
  const queued = new Map<string, { at: number; input: unknown; endedAt: number | null; jobMs: number | undefined; noRetry?: boolean }>();
  const ended = (id: string) => {
    const q = queued.get(id)!;
    if (q.endedAt === null && q.jobMs !== undefined && Date.now() >= q.at + q.jobMs) q.endedAt = q.at + q.jobMs;
    return q.endedAt;
  };
  const statusOf = (id: string) =>
    ended(id) === null ? { status: 'IN_QUEUE', queue_position: 0, request_id: id } : { status: 'COMPLETED', request_id: id, logs: [], metrics: { inference_time: 1 } };
  /**
   * fal's status stream (fal.ai/docs/inference-api/queue/status-stream): server-sent events whose data is the
   * status object of the status call, closed after COMPLETED, with a comment line every 15 s.
   */
  const stream = (res: ServerResponse, id: string) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const keepAlive = setInterval(() => res.write(': ping\n\n'), 15_000);
    let timer: NodeJS.Timeout | undefined;
    res.on('close', () => {
      clearInterval(keepAlive);
      clearTimeout(timer);
    });
    const tell = () => {
      res.write(`data: ${JSON.stringify(statusOf(id))}\n\n`);
      if (ended(id) !== null || opts.stream === 'cut') return void res.end();
      const q = queued.get(id)!;
      // Requests that end by the count of status calls end only when polled: the stream closes early.
      if (q.jobMs === undefined) return void res.end();
      timer = setTimeout(tell, Math.max(1, q.at + q.jobMs - Date.now()));
    };
    tell();
  };
  return async (req, res) => {
    const host = `http://${req.headers.host}`;
    if (req.method === 'POST' && req.path === `/${FAL_MODEL}`) {
      const id = `fal-req-${++next}`;
      ledger.charged.push(id);
      const noRetry = ['1', 'true', 'yes'].includes(String(req.headers['x-fal-no-retry']).toLowerCase());
      queued.set(id, { at: Date.now(), input: JSON.parse(req.body), endedAt: null, jobMs: opts.jobMsOf?.(next) ?? opts.jobMs, noRetry });
      if (opts.submitDelayMs) await new Promise((r) => setTimeout(r, opts.submitDelayMs));
      if (opts.dropAnswer?.()) return void res.socket?.destroy();
      const base = `${opts.urlsOn ?? host}/fal-ai/flux/requests/${id}`;
      if (opts.submitStatus && opts.submitStatus >= 500) return send(res, opts.submitStatus, { detail: 'upstream timed out' }, { 'x-fal-request-id': id });
      const accepted = { request_id: id, status: 'IN_QUEUE', status_url: `${base}/status`, response_url: base, cancel_url: `${base}/cancel` };
      if (opts.drip) return drip(res, JSON.stringify(accepted), opts.drip.named ? { 'x-fal-request-id': id } : {});
      if (opts.holdBodyMs) return sendHeld(res, opts.holdBodyMs, accepted, { 'x-fal-request-id': id });
      return send(res, 200, accepted, { 'x-fal-request-id': id });
    }
    const match = /^\/fal-ai\/flux\/requests\/([\w-]+)(\/status\/stream|\/status|\/cancel)?(\?.*)?$/.exec(req.path);
    if (match) {
      const [, id, tail] = match as unknown as [string, string, string | undefined];
      if (!ledger.charged.includes(id!)) return send(res, 404, { detail: 'request not found' });
      if (tail === '/cancel') {
        if (opts.cancelBody) return send(res, 200, opts.cancelBody);
        // By default a queued request, which fal removes from its queue: OK.
        const [code, status] = opts.cancelAnswer ?? [200, 'OK'];
        return send(res, code, { status });
      }
      if (tail === '/status/stream') {
        if (opts.stream === 'off') return send(res, 404, { detail: 'Not Found' });
        return stream(res, id!);
      }
      if (tail === '/status') {
        const n = (polls.get(id!) ?? 0) + 1;
        polls.set(id!, n);
        if (queued.get(id!)!.jobMs === undefined && n > (opts.polls ?? 1)) queued.get(id!)!.endedAt ??= Date.now();
        return send(res, ended(id!) === null ? 202 : 200, statusOf(id!));
      }
      if (opts.resultUnauthorizedOnce && !refused.has(req.path)) {
        refused.add(req.path);
        return send(res, 401, { detail: 'Unauthorized' });
      }
      if (opts.runnerFailsOnce && queued.get(id!)!.noRetry) {
        return send(res, 503, { detail: 'Runner disconnected', error_type: 'runner_disconnected' }, { 'x-fal-error-type': 'runner_disconnected' });
      }
      if (opts.resultError === 'request') return send(res, 504, { detail: 'Request timed out', error_type: 'request_timeout' }, { 'x-fal-error-type': 'request_timeout' });
      if (opts.resultError === 'model') {
        const detail = [{ loc: ['body', 'prompt'], msg: 'The content could not be processed because it contained material flagged by a content checker.', type: 'content_policy_violation', url: 'https://docs.fal.ai/errors#content_policy_violation' }];
        return send(res, 422, { detail });
      }
      const once = opts.resultOnceOf?.(Number(id!.replace('fal-req-', '')));
      if (once && !refused.has(req.path)) {
        refused.add(req.path);
        return send(res, ...once);
      }
      if (opts.resultError === 'gateway' && !refused.has(req.path)) {
        refused.add(req.path);
        return send(res, 502, '<html><body>502 Bad Gateway</body></html>', { 'content-type': 'text/html' });
      }
      const images = Array.from({ length: opts.images ?? 1 }, (_, i) => ({ url: `${host}/files/${id}-${i}.png`, content_type: 'image/png' }));
      return send(res, 200, { images, seed: 7 });
    }
    if (req.path.startsWith('/files/')) {
      if (opts.badFile !== undefined && req.path.endsWith(`-${opts.badFile}.png`)) return send(res, 200, { error: 'not an image' });
      return send(res, 200, png.bytes, { 'content-type': 'image/png' });
    }
    if (req.path.startsWith('/v1/models/requests/by-endpoint')) {
      // fal's request history (fal.ai/docs/platform-apis/v1/models/requests/by-endpoint.md): sorted by end time,
      // statuses success|error|user_error only. Its docs do not say whether a queued request is listed; the
      // stand-in takes the narrow reading, listing a request only once it has ended, and filters on end time.
      const q = new URL(req.path, host).searchParams;
      const [from, to] = [Date.parse(q.get('start') ?? ''), Date.parse(q.get('end') ?? '')];
      const items = [...queued.entries()]
        .filter(([id]) => q.get('endpoint_id') === FAL_MODEL && ended(id) !== null)
        .map(([id, r]) => ({ id, r, end: r.endedAt! }))
        .filter(({ end }) => end >= from && end <= to)
        .sort((a, b) => b.end - a.end)
        .map(({ id, r, end }) => ({
          request_id: id,
          endpoint_id: FAL_MODEL,
          sent_at: new Date(r.at).toISOString(),
          started_at: new Date(r.at).toISOString(),
          ended_at: new Date(end).toISOString(),
          status_code: 200,
          duration: (end - r.at) / 1000,
          ...(q.get('expand') === 'payloads' ? { json_input: r.input } : {}),
        }));
      const limit = Number(q.get('limit') ?? 50);
      const offset = Number(Buffer.from(q.get('cursor') ?? 'MA==', 'base64').toString());
      const more = offset + limit < items.length;
      return send(res, 200, { items: items.slice(offset, offset + limit), has_more: more, next_cursor: more ? Buffer.from(String(offset + limit)).toString('base64') : null });
    }
    if (req.path.startsWith('/v1/models/pricing')) return send(res, 200, { prices: [{ endpoint_id: FAL_MODEL, unit_price: 0.025, unit: 'megapixels', currency: 'USD' }] });
  };
}

/**
 * OpenAI images (platform.openai.com/docs/api-reference/images): synchronous, the image as b64_json in the
 * body, the request named only by the `x-request-id` header.
 */
/**
 * `usage`: the tokens a GPT image answer reports, as ImagesResponse.Usage ("For `gpt-image-1` only, the token usage
 * information": openai-python src/openai/types/images_response.py): its text and image input tokens and output tokens.
 */
export function openAiImages(
  ledger: Ledger,
  png: Media,
  opts: { cutBody?: boolean; holdBodyMs?: number; urlFailures?: number; n?: number; usage?: { text: number; image: number; output: number } } = {},
): Route {
  let next = 0;
  let fileFailures = 0;
  return async (req, res) => {
    if (req.path === '/files/image.png') {
      if (fileFailures++ < (opts.urlFailures ?? 0)) return send(res, 502, { error: 'bad gateway' });
      return send(res, 200, png.bytes, { 'content-type': 'image/png' });
    }
    if (req.method !== 'POST' || req.path !== '/v1/images/generations') return;
    const id = `req_${++next}`;
    ledger.charged.push(id);
    const image = opts.urlFailures !== undefined ? { url: `http://${req.headers.host}/files/image.png` } : { b64_json: png.bytes.toString('base64') };
    const u = opts.usage;
    const usage = u && { input_tokens: u.text + u.image, input_tokens_details: { text_tokens: u.text, image_tokens: u.image }, output_tokens: u.output, total_tokens: u.text + u.image + u.output };
    const body = { created: 1, data: Array.from({ length: opts.n ?? 1 }, () => image), ...(usage ? { usage } : {}) };
    if (opts.cutBody) return cutAfterHeaders(res, 200, { 'content-type': 'application/json', 'x-request-id': id }, JSON.stringify(body).slice(0, 40));
    if (opts.holdBodyMs) return sendHeld(res, opts.holdBodyMs, body, { 'x-request-id': id });
    send(res, 200, body, { 'x-request-id': id });
  };
}

/**
 * ElevenLabs text to speech (elevenlabs.io/docs/api-reference): the audio in the body, the request named
 * by the `request-id` header, and every generation listed in the history with its request id.
 */
/**
 * `historyHeader`: answers carry the history item id in a `history-item-id` header, which ElevenLabs' OpenAPI does not
 * declare (elevenlabs-js issue #152); off, an answer names its request only.
 */
export function elevenLabs(ledger: Ledger, speech: Media, opts: { cutBody?: boolean; holdMs?: number; historyHeader?: boolean; tier?: string; credits?: number[] } = {}): Route {
  let next = 0;
  return async (req, res) => {
    if (req.method === 'POST' && req.path.startsWith('/v1/text-to-speech/')) {
      const id = `el-req-${++next}`;
      ledger.charged.push(id);
      // `character-cost` counts credits ("Credits were previously referred to as characters", help.elevenlabs.io
      // article 27562116787345): Flash and Turbo take one credit per 2 characters, rounded up, the others one a character.
      const { text = '', model_id: model = '' } = JSON.parse(req.body || '{}') as { text?: string; model_id?: string };
      const credits = /flash|turbo/.test(model) ? Math.ceil(text.length / 2) : text.length;
      opts.credits?.push(credits);
      const named = { 'content-type': 'audio/mpeg', 'request-id': id, 'character-cost': String(credits), ...(opts.historyHeader ? { 'history-item-id': `hist-${ledger.charged.length - 1}` } : {}) };
      // The audio is made (and billed) before any of the answer leaves: a slow generation holds the whole answer.
      if (opts.holdMs) await new Promise((r) => setTimeout(r, opts.holdMs));
      if (opts.cutBody) return cutAfterHeaders(res, 200, named);
      return send(res, 200, speech.bytes, named);
    }
    // Each generation is a history item with an id of its own and the request id of its answer (GET /v1/history and
    // GET /v1/history/{history_item_id}, SpeechHistoryItemResponseModel in elevenlabs-docs fern/apis/api/openapi.json).
    const history = () =>
      ledger.charged.map((id, i) => ({
        history_item_id: `hist-${i}`,
        request_id: id,
        text: 'hello there',
        voice_id: 'voice-1',
        model_id: 'eleven_multilingual_v2',
        date_unix: Math.floor(Date.now() / 1000),
        character_count_change_from: 0,
        character_count_change_to: 11,
        state: 'created',
      }));
    if (req.path.startsWith('/v1/history/') && req.path.endsWith('/audio')) return send(res, 200, speech.bytes, { 'content-type': 'audio/mpeg' });
    if (req.path.startsWith('/v1/history/')) {
      const item = history().find((h) => `/v1/history/${h.history_item_id}` === req.path);
      return item ? send(res, 200, item) : send(res, 404, { detail: { status: 'history_item_not_found' } });
    }
    if (req.path.startsWith('/v1/history')) return send(res, 200, { history: history(), has_more: false, last_history_item_id: null });
    // GET /v1/user/subscription (ExtendedSubscriptionResponseModel, elevenlabs-docs fern/apis/api/openapi.json).
    if (req.path === '/v1/user/subscription') {
      return send(res, 200, { tier: opts.tier ?? 'creator', character_count: 1000, character_limit: 100_000, next_character_count_reset_unix: 1_900_000_000, currency: 'usd', status: 'active' });
    }
  };
}
