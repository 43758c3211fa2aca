import { readJson, type HttpResponse } from '../http/client.ts';
import { ProviderHttp } from '../http/providerHttp.ts';
import type { Task } from '../tasks/model.ts';
import type { AdapterConfig } from './config.ts';
import { SubmitError, type PollResult, type PreparedRequest, type ProviderAdapter, type ProviderCapabilities, type ProviderOutput, type SubmitOptions, type SubmitResult } from './port.ts';
import { modelFor, type ModelSpec } from './models.ts';
import { checkInput, type InputSchema } from './schema.ts';
import { header, localRequestId, readAll, requireKey } from './shared.ts';

export const OPENAI_URL = 'https://api.openai.com';

const AUDIO_LIMIT = 64 << 20;
const IMAGE_LIMIT = 64 << 20;
const REQUEST_ID_HEADER = 'x-request-id';

const IMAGE: InputSchema = { prompt: { type: 'string', required: true, maxLength: 4000 }, size: { type: 'string' }, quality: { type: 'string' }, n: { type: 'integer', min: 1, max: 4 } };
const SPEECH: InputSchema = {
  text: { type: 'string', required: true, maxLength: 4096, hint: 'the words to say' },
  voice: { type: 'string', oneOf: ['alloy', 'ash', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer'] },
};

/** Model ids as in openai-node's ImageModel and SpeechModel types. */
const MODELS: ModelSpec[] = [
  { id: 'gpt-image-1', kind: 'image', title: 'GPT Image 1', inputs: IMAGE },
  { id: 'dall-e-3', kind: 'image', title: 'DALL·E 3', inputs: IMAGE },
  { id: 'tts-1', kind: 'speech', title: 'TTS 1', inputs: SPEECH },
  { id: 'tts-1-hd', kind: 'speech', title: 'TTS 1 HD', inputs: SPEECH },
  { id: 'gpt-4o-mini-tts', kind: 'speech', title: 'GPT-4o mini TTS', inputs: SPEECH },
];

/**
 * OpenAI images and speech: synchronous, and OpenAI offers no way to look a past request up or fetch its
 * result again. Every answer names the request in the `x-request-id` header
 * (developers.openai.com/api/reference/overview), which arrives before the body and reaches the engine at
 * once, so a body cut afterwards leaves an unknown outcome with the id a person can give OpenAI.
 */
export class OpenAiAdapter implements ProviderAdapter {
  readonly id = 'openai';
  readonly capabilities: ProviderCapabilities = {
    mode: 'sync',
    idempotencyHeader: null,
    lookup: false,
    pollById: false,
    cancel: false,
    quote: 'catalogue',
    billing: null,
    neverBilled: null,
    models: MODELS,
  };
  private readonly http: ProviderHttp;

  constructor(private readonly config: AdapterConfig) {
    this.http = new ProviderHttp({
      name: 'OpenAI',
      baseUrl: config.baseUrl ?? OPENAI_URL,
      headers: config.key ? { authorization: `Bearer ${config.key}` } : {},
      requestIdHeader: REQUEST_ID_HEADER,
      // Synchronous generation holds the request open until the image or audio is made.
      timeouts: { submit: { headersMs: 5 * 60_000, bodyMs: 5 * 60_000 }, ...config.timeouts },
    });
  }

  prepare(task: Pick<Task, 'kind' | 'model' | 'input'>): PreparedRequest {
    const model = modelFor('OpenAI', MODELS, task.kind, task.model);
    requireKey(this.config, 'OpenAI', 'OPENAI_API_KEY');
    const input = checkInput(model.inputs, task.input);
    if (task.kind === 'image') {
      const body = { model: task.model, prompt: input.prompt, n: input.n ?? 1, size: input.size, quality: input.quality, ...(task.model.startsWith('dall-e') ? { response_format: 'b64_json' } : {}) };
      return { kind: task.kind, model: task.model, input, body: { path: '/v1/images/generations', json: JSON.stringify(body) } };
    }
    const body = { model: task.model, input: input.text, voice: input.voice ?? 'alloy', response_format: 'mp3' };
    return { kind: task.kind, model: task.model, input, body: { path: '/v1/audio/speech', json: JSON.stringify(body) } };
  }

  async submit(request: PreparedRequest, options: SubmitOptions): Promise<SubmitResult> {
    const { path, json } = request.body as { path: string; json: string };
    const res = await this.http.submit(path, json, { 'content-type': 'application/json' }, options);
    const requestId = header(res, REQUEST_ID_HEADER);
    const outputs = request.kind === 'image' ? await this.images(res, requestId) : [{ url: null, bytes: await readAll(res, AUDIO_LIMIT, 'OpenAI', requestId), contentType: 'audio/mpeg' }];
    return { requestId: requestId ?? localRequestId(options.idempotencyKey), handle: null, quote: null, result: { outputs, costActual: null } };
  }

  private async images(res: HttpResponse, requestId: string | undefined): Promise<ProviderOutput[]> {
    let body: any;
    try {
      body = await readJson(res, IMAGE_LIMIT);
    } catch (err) {
      const named = requestId ? `; OpenAI request id ${requestId}` : '';
      throw new SubmitError({ kind: 'maybe_applied', message: `OpenAI made the image but its answer could not be read (${(err as Error).message}${named})` });
    }
    const data: unknown[] = Array.isArray(body?.data) ? body.data : [];
    const outputs = data.flatMap((d: any): ProviderOutput[] =>
      typeof d?.b64_json === 'string' ? [{ url: null, bytes: Buffer.from(d.b64_json, 'base64'), contentType: 'image/png' }] : typeof d?.url === 'string' ? [{ url: d.url, contentType: 'image/png' }] : [],
    );
    if (outputs.length === 0) throw new SubmitError({ kind: 'maybe_applied', message: 'OpenAI answered without an image' });
    return outputs;
  }

  async poll(): Promise<PollResult> {
    return { state: 'failed', error: 'OpenAI keeps no copy of a synchronous result: it was paid for and cannot be fetched again', costActual: null };
  }

  download(output: ProviderOutput, signal?: AbortSignal): Promise<AsyncIterable<Uint8Array>> {
    return this.http.download(output, signal);
  }
}
