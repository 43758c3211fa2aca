import { send, TransportError } from '../http/client.ts';
import { DEFAULT_TIMEOUTS, ProviderHttp, type CallTimeouts } from './providerHttp.ts';
import { canonicalJson } from '../domain/tasks/inputHash.ts';
import { toMicros, type RemoteRef, type Task } from '../domain/tasks/model.ts';
import { PollError, ResultGone, SubmitError, type CancelOutcome, type Candidate, type Money, type PollResult, type PreparedRequest, type ProviderAdapter, type ProviderCapabilities, type ProviderOutput, type SubmitOptions, type SubmitResult } from './port.ts';
import { SIMULATOR_MODELS } from '../simulator/models.ts';
import { modelFor, type ModelSpec } from './models.ts';
import { checkInput, type InputSchema } from './schema.ts';
import { SIMULATOR_CLIP_MAX_SEC } from './clipDurations.ts';
import { DEFAULT_DRAFT_SCENES } from '../domain/storyboardDraft.ts';
import { DRAFT_INPUTS, TOKENS_PER_SCENE } from './openaiResponses.ts';

const PROMPT = { type: 'string', required: true, maxLength: 2000, hint: 'what to make, in words' } as const;
const SEED = { type: 'integer', min: 0 } as const;
/** The simulator makes stills and clips at any even size in its bounds (simulator/media.ts sizeOf). */
const SIDE = { type: 'integer', min: 16, max: 3840 } as const;

const INPUTS: Record<'image' | 'clip' | 'speech' | 'draft', InputSchema> = {
  image: { prompt: PROMPT, seed: SEED, width: SIDE, height: SIDE },
  clip: { prompt: PROMPT, image_url: { type: 'string' }, duration: { type: 'number', min: 0.5, max: SIMULATOR_CLIP_MAX_SEC }, seed: SEED, width: SIDE, height: SIDE },
  speech: { text: { type: 'string', required: true, maxLength: 5000, hint: 'the words to say' }, voice: { type: 'string' } },
  // The simulator drafts a storyboard as OpenAI's Responses adapter is asked to.
  draft: DRAFT_INPUTS,
};

const MODELS: ModelSpec[] = (['image', 'clip', 'speech', 'draft'] as const).map((kind) => ({ id: SIMULATOR_MODELS[kind]!, kind, title: `Simulator ${kind}`, inputs: INPUTS[kind] }));

export function money(value: unknown): Money | null {
  if (!value || typeof value !== 'object') return null;
  const { amount, currency } = value as { amount?: unknown; currency?: unknown };
  if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0) return null;
  return { amount: toMicros(amount), currency: typeof currency === 'string' ? currency : 'USD' };
}

function record(value: unknown, what: string): Record<string, unknown> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new PollError(`the simulator sent no ${what}`);
  return value as Record<string, unknown>;
}

/** The simulator's one answer for a paid result it no longer keeps (see the header of simulator/server.ts). */
const EXPIRED = 410;

/** The adapter for the bundled simulator's queue API (see simulator/server.ts). */
export class SimulatorAdapter implements ProviderAdapter {
  readonly id = 'simulator';
  readonly capabilities: ProviderCapabilities = {
    mode: 'async',
    // Like most generative APIs the simulator honours no idempotency key; the key is still sent, so its
    // charge log names the attempt.
    idempotencyHeader: null,
    lookup: true,
    lookupLists: 'the simulator lists every request it accepted, queued ones included',
    pollById: true,
    cancel: true,
    quote: 'submit',
    billing: 'the result\'s "cost" field',
    neverBilled: 'a 503 before the request is accepted',
    models: MODELS,
  };
  private readonly http: ProviderHttp;
  private readonly timeouts: CallTimeouts;

  constructor(baseUrl: string, timeouts?: Partial<CallTimeouts>) {
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...timeouts };
    // The simulator documents its answers in the header of simulator/server.ts: a 503 to a submit alone is
    // never billed, and every answer after an acceptance names the request in x-request-id.
    this.http = new ProviderHttp({
      name: 'The simulator',
      baseUrl,
      headers: {},
      timeouts,
      neverBilled: (s) => s === 503,
      requestIdHeader: 'x-request-id',
    });
  }

  prepare(task: Pick<Task, 'kind' | 'model' | 'input'>): PreparedRequest {
    const checked = checkInput(modelFor('The simulator', MODELS, task.kind, task.model).inputs, task.input);
    // A draft's cap on its answer, as a text model is sent one, so it is priced the same way.
    const input = task.kind === 'draft' ? { ...checked, scenes: checked.scenes ?? DEFAULT_DRAFT_SCENES, max_output_tokens: TOKENS_PER_SCENE * Number(checked.scenes ?? DEFAULT_DRAFT_SCENES) } : checked;
    return { kind: task.kind, model: task.model, input, body: JSON.stringify({ input }) };
  }

  async submit(request: PreparedRequest, options: SubmitOptions): Promise<SubmitResult> {
    const res = await this.http.submit(
      `/v1/${request.kind}/${encodeURIComponent(request.model)}/requests`,
      request.body as string,
      { 'content-type': 'application/json', 'idempotency-key': options.idempotencyKey },
      options,
    );
    const body = await this.http.acceptedJson(res);
    if (typeof body.request_id !== 'string' || !body.request_id) {
      throw new SubmitError({ kind: 'maybe_applied', message: 'the simulator accepted the request but sent no request id' });
    }
    return { requestId: body.request_id, handle: null, quote: money(body.quote), result: null };
  }

  async poll({ requestId }: RemoteRef, signal?: AbortSignal): Promise<PollResult> {
    // Any error answer, a 404 for an id the simulator does not know among them, is a PollError: asked again.
    const body = record((await this.http.get(`/v1/requests/${encodeURIComponent(requestId)}/status`, signal)).json, 'status');
    return this.outcome(requestId, body, signal);
  }

  /** The simulator's status stream (see the header of simulator/server.ts), as fal's: closed after the request ends. */
  async watch({ requestId }: RemoteRef, onProgress: (progress: number | null) => void, signal: AbortSignal): Promise<PollResult | null> {
    for await (const event of this.http.events(`/v1/requests/${encodeURIComponent(requestId)}/status/stream`, signal)) {
      const answer = await this.outcome(requestId, record(event, 'status'), signal);
      if (answer.state !== 'pending') return answer;
      onProgress(answer.progress);
    }
    return null;
  }

  private async outcome(requestId: string, body: Record<string, unknown>, signal?: AbortSignal): Promise<PollResult> {
    const id = encodeURIComponent(requestId);
    switch (body.status) {
      case 'IN_QUEUE':
      case 'IN_PROGRESS':
        return { state: 'pending', progress: typeof body.progress === 'number' ? body.progress : null };
      // The simulator charges a request once, at acceptance, "whatever comes after" (simulator/server.ts), and
      // its ledger keeps the charge of a job that fails or is cancelled.
      case 'FAILED':
        return { state: 'failed', error: `the simulator failed: ${String(body.error ?? 'no reason given')}`, costActual: null, charged: 'yes' };
      case 'CANCELLED':
        return { state: 'failed', error: 'the request was cancelled at the simulator', costActual: null, charged: 'yes' };
      case 'COMPLETED': {
        const result = record((await this.http.get(`/v1/requests/${id}/result`, signal)).json, 'result');
        if (!Array.isArray(result.outputs) || result.outputs.length === 0) throw new PollError('the simulator sent a result with no outputs');
        const outputs: ProviderOutput[] = result.outputs.map((o: unknown) => {
          const out = record(o, 'output');
          if (typeof out.url !== 'string') throw new PollError('the simulator sent an output with no url');
          return { url: out.url, contentType: typeof out.content_type === 'string' ? out.content_type : null };
        });
        const cost = money(result.cost);
        return { state: 'succeeded', result: { outputs, costActual: cost && { ...cost, source: 'the simulator\'s "cost" field', reported: 'money' } } };
      }
      default:
        throw new PollError(`the simulator reported an unknown status ${JSON.stringify(body.status)}`);
    }
  }

  /** Only the simulator's documented expiry (a 410) is ResultGone; any other failure is worth another try. */
  async download(output: ProviderOutput, signal?: AbortSignal): Promise<AsyncIterable<Uint8Array>> {
    if (!output.url) throw new PollError('the simulator gave no file for this result');
    let res;
    try {
      res = await send('GET', output.url, { timeouts: this.timeouts.download, signal });
    } catch (err) {
      if (err instanceof TransportError) throw new PollError(`The simulator: ${err.message}`);
      throw err;
    }
    if (res.status === 200) return res.body;
    await res.body.dump();
    if (res.status === EXPIRED) {
      throw new ResultGone('The simulator no longer has this result (HTTP 410: it expired). It was paid for; results are kept only for a while');
    }
    throw new PollError(`The simulator did not give the file this time (HTTP ${res.status})`);
  }

  /** The simulator stops a job at once (OK), like fal for a queued request; a finished one answers 400. */
  async cancel({ requestId }: RemoteRef): Promise<CancelOutcome> {
    const { json } = await this.http.get(`/v1/requests/${encodeURIComponent(requestId)}/cancel`, undefined, 'PUT');
    return (json as { status?: unknown } | null)?.status === 'OK' ? 'cancelled' : 'requested';
  }

  async lookup(window: { from: number; to: number }, request: PreparedRequest, signal?: AbortSignal): Promise<Candidate[]> {
    const { json } = await this.http.get(`/v1/requests?created_after=${window.from}&created_before=${window.to}`, signal);
    const list = record(json, 'list').requests;
    if (!Array.isArray(list)) throw new PollError('the simulator sent no list of requests');
    const wanted = canonicalJson(request.input);
    return list.map((r: Record<string, unknown>) => ({
      requestId: String(r.request_id),
      createdAt: Number(r.created_at),
      status: String(r.status),
      inputMatches: r.model === request.model && canonicalJson(r.input) === wanted,
    }));
  }
}
