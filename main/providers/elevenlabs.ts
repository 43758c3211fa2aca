import { ProviderHttp } from './providerHttp.ts';
import { creditsOf, entryFor, type PlanPrices } from '../pricing/catalogue.ts';
import { creditPlans, creditPriceOf, creditWords, planOfTier } from '../pricing/creditPlans.ts';
import { toMicros, type RemoteRef, type Task } from '../domain/tasks/model.ts';
import type { AdapterConfig } from './config.ts';
import { PollError, type Allowance, type Listing, type ReportedCost, type PollResult, type PreparedRequest, type ProviderAdapter, type ProviderCapabilities, type ProviderOutput, type SubmitOptions, type SubmitResult } from './port.ts';
import { modelFor, type ModelSpec } from './models.ts';
import { checkInput, type InputSchema } from './schema.ts';
import { header, localRequestId, obj, readAll, requireKey } from './shared.ts';

export const ELEVENLABS_URL = 'https://api.elevenlabs.io';

const AUDIO_LIMIT = 64 << 20;
const REQUEST_ID_HEADER = 'request-id';
/**
 * The generation's history item id, on a text-to-speech answer. ElevenLabs' OpenAPI does not declare it; asked to expose
 * it, elevenlabs-js's maintainers answered that the raw response gives it (github.com/elevenlabs/elevenlabs-js/issues/152,
 * v2.1.0 `withRawResponse`). Read when present, never relied on: adopting still asks the history for every name.
 */
const HISTORY_ITEM_HEADER = 'history-item-id';
/**
 * The history is read a page at a time, newest first: `page_size` at most 1000, then `start_after_history_item_id` set
 * to the answer's `last_history_item_id` while `has_more` (GET /v1/history, GetSpeechHistoryResponseModel in
 * elevenlabs-docs fern/apis/api/openapi.json). Bounded, so a very long history is never read whole.
 */
const HISTORY_PAGE = 1000;
const HISTORY_PAGES = 5;

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
 * The account's plan, from the subscription's `tier` ("The tier of the user's subscription", GET /v1/user/subscription,
 * elevenlabs-docs fern/apis/api/openapi.json), against the plan set in settings: words when they differ, else null.
 * A person's own price per credit is theirs to keep; a tier that names none of the plans says nothing.
 */
function planMismatch(tier: unknown, set: PlanPrices): string | null {
  const account = planOfTier(tier);
  if (!account || typeof set.creditPrice === 'number' || set.plan === account) return null;
  const title = (plan: string) => creditPlans('elevenlabs').find((p) => p.plan === plan)?.title ?? plan;
  const priced = creditPriceOf('elevenlabs', set);
  const now = set.plan ? `settings say ${title(set.plan)}` : `no plan is set in settings`;
  return `Your ElevenLabs account is on the ${title(account)} plan, but ${now}, so credits are priced at ${priced?.whose} ${priced?.price} ${priced?.currency} a credit; pick ${title(account)} in Settings`;
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
    this.prices = { creditPrice: config.creditPrice ?? null, plan: config.plan ?? null };
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
   * "the number of characters used for billing" (elevenlabs-docs fern/apis/api/openapi.json; "the cost of the
   * generation in characters", fern/docs/pages/developer-guides/cookbooks/text-to-speech/request-stitching.mdx), and
   * ElevenLabs' billing "characters" are its credits: "Credits were previously referred to as "characters." ... the
   * value remains unchanged" (help.elevenlabs.io/hc/en-us/articles/27562116787345-Have-characters-changed, read
   * 2026-12-02). So it counts credits, the Flash and Turbo half-credit a character already in it (third-party code
   * agrees: 54 characters on Flash reporting 27), and the model's multiplier is not applied again. The history item's
   * `character_count_change_from`/`_to` are the same counter.
   */
  private billed(credits: number, how: string): ReportedCost | null {
    const credit = creditPriceOf(this.id, this.prices);
    if (!credit || credits < 0) return null;
    return {
      amount: toMicros(credits * credit.price),
      currency: credit.currency,
      source: `billed ${creditWords(credits, credit)} (${how}); ${credit.source}`,
      reported: 'credit',
      units: { count: credits, unit: 'credit' },
    };
  }

  async submit(request: PreparedRequest, options: SubmitOptions): Promise<SubmitResult> {
    const { path, json } = request.body as { path: string; json: string };
    const res = await this.http.submit(path, json, { 'content-type': 'application/json', accept: 'audio/mpeg' }, options);
    const requestId = header(res, REQUEST_ID_HEADER);
    const characters = count(header(res, 'character-cost'));
    const historyItem = header(res, HISTORY_ITEM_HEADER);
    const bytes = await readAll(res, AUDIO_LIMIT, 'ElevenLabs', requestId);
    return {
      requestId: requestId ?? localRequestId(options.idempotencyKey),
      handle: null,
      alias: requestId && historyItem && historyItem !== requestId ? historyItem : null,
      quote: null,
      result: { outputs: [{ url: null, bytes, contentType: 'audio/mpeg' }], costActual: characters === null ? null : this.billed(characters, 'the character-cost header') },
    };
  }

  /**
   * The history item for a request: by its own id (an adopted one), else by the request id it records.
   * A 400 or 404 on the direct call only says the id is not a history item id, so the list is asked.
   */
  private async historyItem(id: string, signal?: AbortSignal, listed = (h: Record<string, any>) => h.request_id === id): Promise<Record<string, any> | null> {
    const direct = await this.http.get(`/v1/history/${encodeURIComponent(id)}`, signal, 'GET', undefined, [400, 404]);
    if (direct.status >= 200 && direct.status < 300) return obj(direct.json);
    const { items, cut } = await this.history(new URLSearchParams(), signal, (page) => page.some(listed));
    const found = items.find(listed);
    if (!found && cut) throw new PollError(`ElevenLabs' history has no item for request ${id} among ${cut}`);
    return found ?? null;
  }

  /**
   * History items, newest first, page after page (see HISTORY_PAGES) until `enough` says a page had what was looked
   * for or the history ends; `cut` says in words what was read when more remained. An answer that is not a history
   * page (no `history` list, or no `has_more`) is a PollError: nothing can be concluded from it.
   */
  private async history(query: URLSearchParams, signal: AbortSignal | undefined, enough: (page: Record<string, any>[]) => boolean = () => false) {
    const items: Record<string, any>[] = [];
    let after: string | null = null;
    for (let page = 1; page <= HISTORY_PAGES; page++) {
      const q = new URLSearchParams(query);
      q.set('page_size', String(HISTORY_PAGE));
      if (after) q.set('start_after_history_item_id', after);
      const answer = obj((await this.http.get(`/v1/history?${q}`, signal)).json);
      if (!Array.isArray(answer.history) || typeof answer.has_more !== 'boolean') throw new PollError('ElevenLabs answered the history with no list of items');
      const listed = answer.history.map(obj);
      items.push(...listed);
      after = typeof answer.last_history_item_id === 'string' && answer.last_history_item_id ? answer.last_history_item_id : null;
      if (!answer.has_more || enough(listed)) return { items, cut: null };
      if (!after) throw new PollError('ElevenLabs said its history has more items but not where they start');
    }
    return { items, cut: `the newest ${items.length} history items (${HISTORY_PAGES} pages), and the history has more` };
  }

  /**
   * One generation has two names: the `request-id` header of its answer, which a task records, and the id of its history
   * item, which ElevenLabs' history page shows and which fetches its audio. A history item carries both, as
   * `history_item_id` and `request_id` (SpeechHistoryItemResponseModel, elevenlabs-docs fern/apis/api/openapi.json; the
   * header is read as in elevenlabs-docs' request-stitching cookbook); the answer has no header naming the history item.
   */
  async aliases(requestId: string, signal?: AbortSignal): Promise<string[]> {
    // Either name, in any case: the studio compares request ids without case (a person may type another).
    const same = (id: unknown) => typeof id === 'string' && id.toLowerCase() === requestId.toLowerCase();
    const item = await this.historyItem(requestId, signal, (h) => same(h.history_item_id) || same(h.request_id));
    const named = (id: unknown): id is string => typeof id === 'string' && id !== '';
    // An item that names neither says nothing of the request's other name: "no other name" cannot be concluded from it.
    if (item && !named(item.history_item_id) && !named(item.request_id)) throw new PollError('ElevenLabs answered a history item with neither its id nor its request id');
    const names = [requestId, item?.history_item_id, item?.request_id].filter(named);
    return [...new Set(names)];
  }

  /** A request not in the history yet is asked again later: ElevenLabs documents no "removed" answer for it. */
  async poll(remote: RemoteRef, signal?: AbortSignal): Promise<PollResult> {
    const item = await this.historyItem(remote.requestId, signal);
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
   * a character, as the count is kept in credits (see billed above). It is shown as credits, the word the plans and
   * the bills use: "Credits were previously referred to as characters" (help.elevenlabs.io/hc/en-us/articles/27562116787345).
   */
  async allowance(requests: PreparedRequest[], signal?: AbortSignal): Promise<Allowance> {
    const sub = obj((await this.http.get('/v1/user/subscription', signal)).json);
    const used = sub.character_count;
    const limit = sub.character_limit;
    if (typeof used !== 'number' || typeof limit !== 'number') throw new PollError('ElevenLabs sent no character count for the subscription');
    const needed = requests.reduce((sum, r) => {
      const pricing = entryFor(this.id, r.model, 'speech')?.pricing;
      return sum + creditsOf(r.input, pricing?.per === 'credit' ? pricing.creditsPerCharacter : 1);
    }, 0);
    const reset = sub.next_character_count_reset_unix;
    const note = planMismatch(sub.tier, this.prices);
    return { unit: 'credits', used, limit, needed: Math.ceil(needed), resetsAt: typeof reset === 'number' ? reset * 1000 : null, ...(note ? { note } : {}) };
  }

  async lookup(window: { from: number; to: number }, request: PreparedRequest, signal?: AbortSignal): Promise<Listing> {
    const q = new URLSearchParams({
      date_after_unix: String(Math.floor(window.from / 1000)),
      date_before_unix: String(Math.ceil(window.to / 1000)),
      voice_id: String(request.input.voice_id),
    });
    const { items, cut } = await this.history(q, signal);
    // A task stores the `request-id` header's value, and history items carry the same value as `request_id`
    // (ElevenLabs' OpenAPI, elevenlabs-docs fern/apis/api/openapi.json): candidates are named by it, so "already
    // another task's" compares like with like; the history item id, which fetches the audio, is kept beside it.
    const listing: Listing = items.map((h) => ({
      requestId: typeof h.request_id === 'string' && h.request_id ? h.request_id : String(h.history_item_id),
      aliases: [String(h.history_item_id)],
      createdAt: Number(h.date_unix) * 1000,
      status: String(h.state ?? 'created'),
      inputMatches: h.text === request.input.text && h.model_id === request.model && h.voice_id === request.input.voice_id,
    }));
    if (cut) listing.cut = `ElevenLabs' history was read as far as ${cut}`;
    return listing;
  }
}
