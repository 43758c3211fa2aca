import { ProviderHttp } from '../http/providerHttp.ts';
import { creditPriceOf, entryFor, type PlanPrices } from '../pricing/catalogue.ts';
import { toMicros, type RemoteRef, type Task } from '../tasks/model.ts';
import type { AdapterConfig } from './config.ts';
import { PollError, type Allowance, type Candidate, type ReportedCost, type PollResult, type PreparedRequest, type ProviderAdapter, type ProviderCapabilities, type ProviderOutput, type SubmitOptions, type SubmitResult } from './port.ts';
import { modelFor, type ModelSpec } from './models.ts';
import { checkInput, type InputSchema } from './schema.ts';
import { header, localRequestId, obj, readAll, requireKey } from './shared.ts';

export const ELEVENLABS_URL = 'https://api.elevenlabs.io';

const AUDIO_LIMIT = 64 << 20;
const REQUEST_ID_HEADER = 'request-id';

/** The characters one request takes, per model (elevenlabs-docs fern/docs/pages/models.mdx). */
const speech = (maxLength: number): InputSchema => ({
  text: { type: 'string', required: true, maxLength, hint: 'the words to say' },
  voice_id: { type: 'string', required: true, hint: 'an ElevenLabs voice id' },
});

/** Model ids as listed at elevenlabs.io/docs/models. */
const MODELS: ModelSpec[] = [
  { id: 'eleven_multilingual_v2', kind: 'speech', title: 'Eleven Multilingual v2', inputs: speech(10_000) },
  { id: 'eleven_v3', kind: 'speech', title: 'Eleven v3', inputs: speech(3_000) },
  { id: 'eleven_flash_v2_5', kind: 'speech', title: 'Eleven Flash v2.5', inputs: speech(40_000) },
  { id: 'eleven_turbo_v2_5', kind: 'speech', title: 'Eleven Turbo v2.5', inputs: speech(40_000) },
];

/**
 * A count of characters (credits) as ElevenLabs reports one, or null: an empty, blank or malformed value says
 * nothing about the bill (`Number('')` and `Number(null)` would read as 0).
 */
function count(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : null;
  return typeof value === 'string' && /^\d+(\.\d+)?$/.test(value) ? Number(value) : null;
}

/**
 * `quota_exceeded` (HTTP 400 or 401): "You have insufficient quota to complete the request. You can purchase
 * Pay As You Go credits, or ... enable usage based billing from your Subscription page"
 * (help.elevenlabs.io/hc/en-us/articles/19572237925521, elevenlabs-docs developer-guides/error-messages.mdx),
 * in `detail.status`, which the errors page calls legacy in favour of `detail.code`
 * (elevenlabs.io/docs/eleven-api/resources/errors). Its 401 is no refused key, so it is read first.
 */
function outOfCharacters(status: number, body: unknown): string | null {
  const detail = (body as { detail?: Record<string, unknown> } | null)?.detail;
  if (status < 400 || status >= 500 || !detail || typeof detail !== 'object') return null;
  if (detail.code !== 'quota_exceeded' && detail.status !== 'quota_exceeded') return null;
  const said = typeof detail.message === 'string' ? `: ${detail.message.slice(0, 300)}` : '';
  return `ElevenLabs is out of characters for this account (HTTP ${status} quota_exceeded${said}); buy more credits or turn on usage-based billing on the ElevenLabs Subscription page, then generate again (the key was accepted; this is no key problem)`;
}

/**
 * ElevenLabs text to speech: synchronous, with the `request-id` header as the request's name and the
 * `character-cost` header as what was billed (both response headers in ElevenLabs' OpenAPI). The id arrives
 * before the audio and reaches the engine at once; its history lists past generations with the request id
 * of each, so an answer cut after the headers is collected from the history by that id (unless the
 * account runs with logging off), and an unknown outcome can be found again by its text.
 */
export class ElevenLabsAdapter implements ProviderAdapter {
  readonly id = 'elevenlabs';
  readonly capabilities: ProviderCapabilities = {
    mode: 'sync',
    idempotencyHeader: null,
    lookup: true,
    lookupLists:
      'ElevenLabs lists the generations of its history (GET /v1/history) with the request id of each, unless the account ' +
      'runs with logging off; a generation that never finished is not in it',
    pollById: true,
    cancel: false,
    quote: 'catalogue',
    billing: 'the character-cost header (credits billed), at the price per credit set for the plan',
    neverBilled: null,
    models: MODELS,
  };
  readonly prices: PlanPrices;
  private readonly http: ProviderHttp;

  constructor(private readonly config: AdapterConfig) {
    this.prices = { creditPrice: config.creditPrice ?? null };
    this.http = new ProviderHttp({
      name: 'ElevenLabs',
      baseUrl: config.baseUrl ?? ELEVENLABS_URL,
      headers: config.key ? { 'xi-api-key': config.key } : {},
      requestIdHeader: REQUEST_ID_HEADER,
      keyVariable: 'ELEVENLABS_API_KEY',
      accountRefusal: outOfCharacters,
      timeouts: { submit: { headersMs: 4 * 60_000, bodyMs: 4 * 60_000 }, ...config.timeouts },
    });
  }

  prepare(task: Pick<Task, 'kind' | 'model' | 'input'>): PreparedRequest {
    const model = modelFor('ElevenLabs', MODELS, task.kind, task.model);
    requireKey(this.config, 'ElevenLabs', 'ELEVENLABS_API_KEY');
    const input = checkInput(model.inputs, task.input);
    const path = `/v1/text-to-speech/${encodeURIComponent(String(input.voice_id))}?output_format=mp3_44100_128`;
    return { kind: 'speech', model: task.model, input, body: { path, json: JSON.stringify({ text: input.text, model_id: task.model }) } };
  }

  /**
   * What the credits ElevenLabs reported cost, at the plan's price per credit. The `character-cost` header is
   * "the number of characters used for billing" (elevenlabs-docs fern/apis/api/openapi.json), counted as the
   * subscription counts them, in credits: the Flash and Turbo half-credit a character is already in it (seen
   * only in third-party code and notes, e.g. 54 characters on Flash reporting 27; ElevenLabs' docs do not
   * say), so the model's multiplier is not applied again. The history item's `character_count_change_from`/`_to` are the same counter.
   */
  private billed(credits: number, how: string): ReportedCost | null {
    const credit = creditPriceOf(this.id, this.prices);
    if (!credit || credits < 0) return null;
    return { amount: toMicros(credits * credit.price), currency: credit.currency, source: `${credits} credits billed (${how}) at ${credit.price} ${credit.currency} per credit, ${credit.source}` };
  }

  async submit(request: PreparedRequest, options: SubmitOptions): Promise<SubmitResult> {
    const { path, json } = request.body as { path: string; json: string };
    const res = await this.http.submit(path, json, { 'content-type': 'application/json', accept: 'audio/mpeg' }, options);
    const requestId = header(res, REQUEST_ID_HEADER);
    const characters = count(header(res, 'character-cost'));
    const bytes = await readAll(res, AUDIO_LIMIT, 'ElevenLabs', requestId);
    return {
      requestId: requestId ?? localRequestId(options.idempotencyKey),
      handle: null,
      quote: null,
      result: { outputs: [{ url: null, bytes, contentType: 'audio/mpeg' }], costActual: characters === null ? null : this.billed(characters, 'the character-cost header') },
    };
  }

  /**
   * The history item for a request: by its own id (an adopted one), else by the request id it records.
   * A 400 or 404 on the direct call only says the id is not a history item id, so the list is asked.
   */
  private async historyItem(remote: RemoteRef, signal?: AbortSignal): Promise<Record<string, any> | null> {
    const direct = await this.http.get(`/v1/history/${encodeURIComponent(remote.requestId)}`, signal, 'GET', undefined, [400, 404]);
    if (direct.status >= 200 && direct.status < 300) return obj(direct.json);
    const recent = obj((await this.http.get('/v1/history?page_size=1000', signal)).json);
    return ((recent.history as unknown[] | undefined) ?? []).map(obj).find((h) => h.request_id === remote.requestId) ?? null;
  }

  /** A request not in the history yet is asked again later: ElevenLabs documents no "removed" answer for it. */
  async poll(remote: RemoteRef, signal?: AbortSignal): Promise<PollResult> {
    const item = await this.historyItem(remote, signal);
    if (!item) throw new PollError('ElevenLabs has no history item for this request yet (history may be off for this account)');
    if (item.state && item.state !== 'created') throw new PollError(`ElevenLabs history item is ${item.state}`);
    const [from, to] = [count(item.character_count_change_from), count(item.character_count_change_to)];
    const characters = from === null || to === null ? null : to - from;
    return {
      state: 'succeeded',
      result: {
        outputs: [{ url: this.http.url(`/v1/history/${encodeURIComponent(item.history_item_id)}/audio`), contentType: 'audio/mpeg' }],
        costActual: characters === null ? null : this.billed(characters, 'the change in the account\'s character count on its history item'),
      },
    };
  }

  download(output: ProviderOutput, signal?: AbortSignal): Promise<AsyncIterable<Uint8Array>> {
    return this.http.download(output, signal, true);
  }

  /**
   * The subscription's count against its limit for the period (GET /v1/user/subscription: character_count,
   * character_limit, next_character_count_reset_unix; elevenlabs-docs fern/apis/api/openapi.json,
   * SubscriptionResponseModel), and what these requests need of it: their characters at the model's credits
   * a character, as the count is kept in credits (see billed above).
   */
  async allowance(requests: PreparedRequest[], signal?: AbortSignal): Promise<Allowance> {
    const sub = obj((await this.http.get('/v1/user/subscription', signal)).json);
    const used = sub.character_count;
    const limit = sub.character_limit;
    if (typeof used !== 'number' || typeof limit !== 'number') throw new PollError('ElevenLabs sent no character count for the subscription');
    const needed = requests.reduce((sum, r) => {
      const pricing = entryFor(this.id, r.model, 'speech')?.pricing;
      return sum + String(r.input.text ?? '').length * (pricing?.per === 'credit' ? pricing.creditsPerCharacter : 1);
    }, 0);
    const reset = sub.next_character_count_reset_unix;
    return { unit: 'characters', used, limit, needed: Math.ceil(needed), resetsAt: typeof reset === 'number' ? reset * 1000 : null };
  }

  async lookup(window: { from: number; to: number }, request: PreparedRequest, signal?: AbortSignal): Promise<Candidate[]> {
    const q = new URLSearchParams({
      page_size: '1000',
      date_after_unix: String(Math.floor(window.from / 1000)),
      date_before_unix: String(Math.ceil(window.to / 1000)),
      voice_id: String(request.input.voice_id),
    });
    const page = obj((await this.http.get(`/v1/history?${q}`, signal)).json);
    // A task stores the `request-id` header's value, and history items carry the same value as `request_id`
    // (ElevenLabs' OpenAPI, elevenlabs-docs fern/apis/api/openapi.json): candidates are named by it, so "already
    // another task's" compares like with like; the history item id, which fetches the audio, is kept beside it.
    return ((page.history as unknown[] | undefined) ?? []).map(obj).map((h) => ({
      requestId: typeof h.request_id === 'string' && h.request_id ? h.request_id : String(h.history_item_id),
      aliases: [String(h.history_item_id)],
      createdAt: Number(h.date_unix) * 1000,
      status: String(h.state ?? 'created'),
      inputMatches: h.text === request.input.text && h.model_id === request.model && h.voice_id === request.input.voice_id,
    }));
  }
}
