import { ProviderHttp } from '../http/providerHttp.ts';
import { entryFor } from '../pricing/catalogue.ts';
import { toMicros, type RemoteRef, type Task } from '../tasks/model.ts';
import type { AdapterConfig } from './config.ts';
import { PollError, type Candidate, type Money, type PollResult, type PreparedRequest, type ProviderAdapter, type ProviderCapabilities, type ProviderOutput, type SubmitOptions, type SubmitResult } from './port.ts';
import { modelFor, type ModelSpec } from './models.ts';
import { checkInput, type InputSchema } from './schema.ts';
import { header, localRequestId, obj, readAll, requireKey } from './shared.ts';

export const ELEVENLABS_URL = 'https://api.elevenlabs.io';

const AUDIO_LIMIT = 64 << 20;
const REQUEST_ID_HEADER = 'request-id';

const SPEECH: InputSchema = {
  text: { type: 'string', required: true, maxLength: 10_000, hint: 'the words to say' },
  voice_id: { type: 'string', required: true, hint: 'an ElevenLabs voice id' },
};

/** Model ids as listed at elevenlabs.io/docs/models. */
const MODELS: ModelSpec[] = [
  { id: 'eleven_multilingual_v2', kind: 'speech', title: 'Eleven Multilingual v2', inputs: SPEECH },
  { id: 'eleven_v3', kind: 'speech', title: 'Eleven v3', inputs: SPEECH },
  { id: 'eleven_flash_v2_5', kind: 'speech', title: 'Eleven Flash v2.5', inputs: SPEECH },
  { id: 'eleven_turbo_v2_5', kind: 'speech', title: 'Eleven Turbo v2.5', inputs: SPEECH },
];

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
    pollById: true,
    cancel: false,
    quote: 'catalogue',
    billing: 'the character-cost header (characters billed), priced from the catalogue',
    neverBilled: null,
    models: MODELS,
  };
  private readonly http: ProviderHttp;

  constructor(private readonly config: AdapterConfig) {
    this.http = new ProviderHttp({
      name: 'ElevenLabs',
      baseUrl: config.baseUrl ?? ELEVENLABS_URL,
      headers: config.key ? { 'xi-api-key': config.key } : {},
      requestIdHeader: REQUEST_ID_HEADER,
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

  /** Characters billed, priced per character from the catalogue. */
  private billed(characters: number, model: string): Money | null {
    const entry = entryFor(this.id, model, 'speech');
    return entry && entry.unit === 'character' ? { amount: toMicros(characters * entry.price), currency: entry.currency } : null;
  }

  async submit(request: PreparedRequest, options: SubmitOptions): Promise<SubmitResult> {
    const { path, json } = request.body as { path: string; json: string };
    const res = await this.http.submit(path, json, { 'content-type': 'application/json', accept: 'audio/mpeg' }, options);
    const requestId = header(res, REQUEST_ID_HEADER);
    const characters = Number(header(res, 'character-cost'));
    const bytes = await readAll(res, AUDIO_LIMIT, 'ElevenLabs', requestId);
    return {
      requestId: requestId ?? localRequestId(options.idempotencyKey),
      handle: null,
      quote: null,
      result: { outputs: [{ url: null, bytes, contentType: 'audio/mpeg' }], costActual: Number.isFinite(characters) ? this.billed(characters, request.model) : null },
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
    const characters = Number(item.character_count_change_to) - Number(item.character_count_change_from);
    return {
      state: 'succeeded',
      result: {
        outputs: [{ url: this.http.url(`/v1/history/${encodeURIComponent(item.history_item_id)}/audio`), contentType: 'audio/mpeg' }],
        costActual: Number.isFinite(characters) ? this.billed(characters, remote.model) : null,
      },
    };
  }

  download(output: ProviderOutput, signal?: AbortSignal): Promise<AsyncIterable<Uint8Array>> {
    return this.http.download(output, signal, true);
  }

  async lookup(window: { from: number; to: number }, request: PreparedRequest, signal?: AbortSignal): Promise<Candidate[]> {
    const q = new URLSearchParams({
      page_size: '1000',
      date_after_unix: String(Math.floor(window.from / 1000)),
      date_before_unix: String(Math.ceil(window.to / 1000)),
      voice_id: String(request.input.voice_id),
    });
    const page = obj((await this.http.get(`/v1/history?${q}`, signal)).json);
    return ((page.history as unknown[] | undefined) ?? []).map(obj).map((h) => ({
      requestId: String(h.history_item_id),
      createdAt: Number(h.date_unix) * 1000,
      status: String(h.state ?? 'created'),
      inputMatches: h.text === request.input.text && h.model_id === request.model && h.voice_id === request.input.voice_id,
    }));
  }
}
