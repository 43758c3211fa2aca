import { readJson, type HttpResponse } from '../http/client.ts';
import { ProviderHttp, type ProviderHttpConfig } from './providerHttp.ts';
import { citation, entryFor } from '../pricing/catalogue.ts';
import { toMicros, type Task } from '../domain/tasks/model.ts';
import type { AdapterConfig } from './config.ts';
import { SubmitError, type PollResult, type ReportedCost, type PreparedRequest, type ProviderAdapter, type ProviderCapabilities, type ProviderOutput, type SubmitOptions, type SubmitResult } from './port.ts';
import { InvalidInput } from './invalidInput.ts';
import { modelFor, type ModelSpec } from './models.ts';
import { checkInput, type InputSchema } from './schema.ts';
import { header, localRequestId, readAll, requireKey } from './shared.ts';
import { downloadExpiring } from './expiringFiles.ts';

const OPENAI_URL = 'https://api.openai.com';

const AUDIO_LIMIT = 64 << 20;
const IMAGE_LIMIT = 64 << 20;
const REQUEST_ID_HEADER = 'x-request-id';

/**
 * Image inputs per model, from openai-node src/resources/images.ts (ImageGenerateParamsBase): the prompt is
 * at most "32000 characters for the GPT image models ... 4000 characters for `dall-e-3`"; `n` "between 1 and
 * 10. For `dall-e-3`, only `n=1` is supported"; quality high/medium/low (GPT image) or hd/standard
 * (dall-e-3), or auto; sizes 1024x1024, 1536x1024, 1024x1536 or auto (GPT image), 1024x1024, 1792x1024,
 * 1024x1792 (dall-e-3); background, output_format, output_compression and moderation for GPT image models
 * only, style for dall-e-3 only.
 */
const GPT_IMAGE: InputSchema = {
  prompt: { type: 'string', required: true, maxLength: 32_000, hint: 'what to make, in words' },
  n: { type: 'integer', min: 1, max: 10 },
  quality: { type: 'string', oneOf: ['low', 'medium', 'high', 'auto'] },
  size: { type: 'string', oneOf: ['1024x1024', '1536x1024', '1024x1536', 'auto'] },
  background: { type: 'string', oneOf: ['transparent', 'opaque', 'auto'] },
  output_format: { type: 'string', oneOf: ['png', 'jpeg', 'webp'] },
  output_compression: { type: 'integer', min: 0, max: 100 },
  moderation: { type: 'string', oneOf: ['low', 'auto'] },
};
const DALL_E_3: InputSchema = {
  prompt: { type: 'string', required: true, maxLength: 4000, hint: 'what to make, in words' },
  n: { type: 'integer', min: 1, max: 1 },
  quality: { type: 'string', oneOf: ['standard', 'hd'] },
  size: { type: 'string', oneOf: ['1024x1024', '1792x1024', '1024x1792'] },
  style: { type: 'string', oneOf: ['vivid', 'natural'] },
};
/**
 * The image fields sent when given. Quality and size left out are sent as the model's plainest (medium or
 * standard, 1024x1024) rather than left to `auto`, which has no price of its own: the estimate is then the
 * price of what is made (an `auto` the person asks for is estimated at the most it can cost).
 */
const IMAGE_FIELDS = ['n', 'quality', 'size', 'background', 'output_format', 'output_compression', 'moderation', 'style'];
const IMAGE_DEFAULTS: Record<string, Record<string, unknown>> = {
  'dall-e-3': { n: 1, quality: 'standard', size: '1024x1024' },
  gpt: { n: 1, quality: 'medium', size: '1024x1024' },
};
/**
 * Speech inputs (openai-node src/resources/audio/speech.ts): the text is at most 4096 characters; the voices
 * its documentation lists (which voice each model offers is not documented); `instructions` "does not work
 * with `tts-1` or `tts-1-hd`"; speed 0.25 to 4.0.
 */
const VOICES = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'onyx', 'nova', 'sage', 'shimmer', 'verse', 'marin', 'cedar'];
const TTS: InputSchema = {
  text: { type: 'string', required: true, maxLength: 4096, hint: 'the words to say' },
  voice: { type: 'string', oneOf: VOICES },
  speed: { type: 'number', min: 0.25, max: 4 },
};
/** `instructions` has maxLength 4096 (openai/openai-openapi openapi.yaml, CreateSpeechRequest.instructions). */
const SPEECH: InputSchema = { ...TTS, instructions: { type: 'string', maxLength: 4096 } };
const SPEECH_FIELDS = ['speed', 'instructions'];

/** Model ids as in openai-node's ImageModel and SpeechModel types. */
const MODELS: ModelSpec[] = [
  { id: 'gpt-image-1', kind: 'image', title: 'GPT Image 1', inputs: GPT_IMAGE },
  { id: 'dall-e-3', kind: 'image', title: 'DALL·E 3', inputs: DALL_E_3 },
  { id: 'gpt-image-1-mini', kind: 'image', title: 'GPT Image 1 mini', inputs: GPT_IMAGE },
  { id: 'tts-1', kind: 'speech', title: 'TTS 1', inputs: TTS },
  { id: 'tts-1-hd', kind: 'speech', title: 'TTS 1 HD', inputs: TTS },
  { id: 'gpt-4o-mini-tts', kind: 'speech', title: 'GPT-4o mini TTS', inputs: SPEECH },
];

/**
 * The 429s that are a billing stop, not a rate limit: OpenAI says to "check `error.code`", that "a
 * billing-related error may still use the broader `error.type` value `insufficient_quota`", and that
 * "retrying these errors won't restore access" (help.openai.com/en/articles/6614457-troubleshooting-api-usage-and-spend-limits);
 * "429 - You exceeded your current quota ... You have run out of credits or hit your maximum monthly spend"
 * (developers.openai.com/docs/guides/error-codes). Any other 429 is a rate limit, waited out per Retry-After.
 */
const OUT_OF_CREDIT: Record<string, string> = {
  credit_balance_exhausted: 'its credit balance is used up',
  organization_spend_limit_exceeded: "the organization's spending limit is reached",
  project_spend_limit_exceeded: "the project's spending limit is reached",
  organization_usage_limit_exceeded: "the organization's usage limit is reached",
  insufficient_quota: 'its credit is used up or its monthly spending limit is reached',
};

function picked(input: Record<string, unknown>, fields: string[]): Record<string, unknown> {
  return Object.fromEntries(fields.filter((f) => input[f] !== undefined && input[f] !== null).map((f) => [f, input[f]]));
}

/**
 * What a GPT image answer cost, from its `usage` ("For `gpt-image-1` only, the token usage information":
 * openai-node src/resources/images.ts ImagesResponse.Usage) at the model page's token prices; null without
 * usage (dall-e-3 reports none) or token prices. Every output token is priced as an image output token, the
 * dearest kind, as the model page lists no text output price.
 */
function tokenCost(model: string, usage: any): ReportedCost | null {
  const entry = entryFor('openai', model, 'image');
  const t = entry?.tokens;
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null);
  if (!t || !usage || typeof usage !== 'object') return null;
  const text = n(usage.input_tokens_details?.text_tokens);
  const image = n(usage.input_tokens_details?.image_tokens);
  const out = n(usage.output_tokens);
  if (text === null || image === null || out === null) return null;
  const amount = (text * t.textInput + image * t.imageInput + out * t.imageOutput) / 1_000_000;
  return {
    amount: toMicros(amount),
    currency: entry!.currency,
    source:
      `usage reported with the image: ${text} text and ${image} image input tokens at ${t.textInput} and ${t.imageInput} USD per million, ` +
      `${out} output tokens at ${t.imageOutput} USD per million; ${citation(entry!)}`,
    // OpenAI reports tokens, not money: the amount is counted here at the catalogue's prices.
    reported: 'token',
    units: { count: text + image + out, unit: 'token' },
  };
}

function outOfCredit(status: number, body: unknown): string | null {
  const error = (body as { error?: Record<string, unknown> } | null)?.error;
  if (status !== 429 || !error || typeof error !== 'object') return null;
  const code = [error.code, error.type].find((v): v is string => typeof v === 'string' && Object.hasOwn(OUT_OF_CREDIT, v));
  if (!code) return null;
  const said = typeof error.message === 'string' ? `: ${error.message.slice(0, 300)}` : '';
  return `OpenAI is out of credit for this account: ${OUT_OF_CREDIT[code]} (HTTP 429 ${code}${said}); add credit or raise the limit in OpenAI's billing settings, then generate again (waiting does not help, so it is not retried)`;
}

/**
 * OpenAI's HTTP with this config's key, for images and speech and for drafts (openaiResponses.ts): the same account,
 * the same refusals. A 429 insufficient_quota is the account's credit, not a rate limit: never retried.
 */
export function openAiHttp(config: AdapterConfig, own: Pick<ProviderHttpConfig, 'requestIdHeader' | 'timeouts'>): ProviderHttp {
  return new ProviderHttp({
    name: 'OpenAI',
    baseUrl: config.baseUrl ?? OPENAI_URL,
    headers: config.key ? { authorization: `Bearer ${config.key}` } : {},
    keyVariable: 'OPENAI_API_KEY',
    accountRefusal: outOfCredit,
    ...own,
  });
}

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
    billing: 'the usage tokens of a GPT image answer, at the model page\'s token prices (none for dall-e-3 or speech)',
    neverBilled: null,
    models: MODELS,
  };
  private readonly http: ProviderHttp;

  constructor(private readonly config: AdapterConfig) {
    this.http = openAiHttp(config, {
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
      const dallE = task.model === 'dall-e-3';
      // "When using `transparent`, set the output format to `png` or `webp`" (images.ts).
      if (input.background === 'transparent' && input.output_format === 'jpeg') throw new InvalidInput('a transparent background needs "output_format" png or webp, not jpeg', 'output_format');
      const sent = { prompt: input.prompt, ...IMAGE_DEFAULTS[dallE ? 'dall-e-3' : 'gpt'], ...picked(input, IMAGE_FIELDS) };
      const body = { model: task.model, ...sent, ...(dallE ? { response_format: 'b64_json' } : {}) };
      return { kind: task.kind, model: task.model, input: sent, body: { path: '/v1/images/generations', json: JSON.stringify(body) } };
    }
    if (input.instructions !== undefined && model.inputs !== SPEECH) throw new InvalidInput(`"instructions" works only with gpt-4o-mini-tts, not ${task.model}`, 'instructions');
    const sent = { text: input.text, voice: input.voice ?? 'alloy', ...picked(input, SPEECH_FIELDS) };
    const body = { model: task.model, input: sent.text, voice: sent.voice, ...picked(input, SPEECH_FIELDS), response_format: 'mp3' };
    return { kind: task.kind, model: task.model, input: sent, body: { path: '/v1/audio/speech', json: JSON.stringify(body) } };
  }

  async submit(request: PreparedRequest, options: SubmitOptions): Promise<SubmitResult> {
    const { path, json } = request.body as { path: string; json: string };
    const res = await this.http.submit(path, json, { 'content-type': 'application/json' }, options);
    const requestId = header(res, REQUEST_ID_HEADER);
    // Speech answers are the audio alone, with no usage: their cost is the estimate.
    const { outputs, costActual } =
      request.kind === 'image' ? await this.images(res, requestId, request.model) : { outputs: [{ url: null, bytes: await readAll(res, AUDIO_LIMIT, 'OpenAI', requestId), contentType: 'audio/mpeg' }], costActual: null };
    return { requestId: requestId ?? localRequestId(options.idempotencyKey), handle: null, quote: null, result: { outputs, costActual } };
  }

  private async images(res: HttpResponse, requestId: string | undefined, model: string): Promise<{ outputs: ProviderOutput[]; costActual: ReportedCost | null }> {
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
    return { outputs, costActual: tokenCost(model, body?.usage) };
  }

  /**
   * OpenAI cannot be asked about a request later, so this is reached only for one recorded from a whole 2xx
   * answer, or adopted by a person as made: the image or audio was made, and billed.
   */
  async poll(): Promise<PollResult> {
    return { state: 'failed', error: 'OpenAI keeps no copy of a synchronous result: it was paid for and cannot be fetched again', costActual: null, charged: 'yes' };
  }

  /**
   * An image answered as a URL: "URLs are only valid for 60 minutes after the image has been generated" (openai-node
   * src/resources/images.ts, response_format). One that answers 404 or 410 is asked for again in rounds, and called
   * expired only when still gone after them (collectRetry.ts).
   */
  download(output: ProviderOutput, signal?: AbortSignal): Promise<AsyncIterable<Uint8Array>> {
    return downloadExpiring(this.http, output, signal);
  }
}
