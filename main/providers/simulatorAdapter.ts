import {
  classifySubmitStatus,
  readJson,
  retryAfterMs,
  send,
  TransportError,
  transportFailure,
  type HttpResponse,
} from '../http/client.ts';
import { KINDS, toMicros, type Task } from '../tasks/model.ts';
import {
  InvalidInput,
  SubmitError,
  type Money,
  type PollResult,
  type PreparedRequest,
  type ProviderAdapter,
  type ProviderOutput,
  type ProviderResult,
  type SubmitResult,
} from './port.ts';

const SUBMIT_TIMEOUTS = { headersMs: 30_000, bodyMs: 30_000 };
const POLL_TIMEOUTS = { headersMs: 15_000, bodyMs: 15_000 };
const DOWNLOAD_TIMEOUTS = { headersMs: 30_000, bodyMs: 60_000 };

function obj(value: unknown, what: string): Record<string, unknown> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error(`the provider sent no ${what}`);
  return value as Record<string, unknown>;
}

function str(value: unknown, what: string): string {
  if (typeof value !== 'string' || !value) throw new Error(`the provider's answer has no ${what}`);
  return value;
}

function money(value: unknown): Money | null {
  if (!value || typeof value !== 'object') return null;
  const { amount, currency } = value as { amount?: unknown; currency?: unknown };
  if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0) return null;
  return { amount: toMicros(amount), currency: typeof currency === 'string' ? currency : 'USD' };
}

async function errorText(res: HttpResponse): Promise<string> {
  const body = await readJson(res).catch(() => null);
  const detail = body && typeof body === 'object' ? (body as { detail?: unknown }).detail : undefined;
  return `HTTP ${res.status}${typeof detail === 'string' ? `: ${detail}` : ''}`;
}

/** The adapter for the bundled simulator's queue API. */
export class SimulatorAdapter implements ProviderAdapter {
  readonly id = 'simulator';
  readonly capabilities = {
    mode: 'async',
    // The simulator, like most generative APIs, does not honour idempotency keys; the key is still sent so
    // its charge log can name the attempt.
    idempotencyHeader: null,
    lookup: true,
    cancel: true,
    kinds: KINDS.filter((k) => k !== 'render'),
  } as const;

  constructor(private readonly baseUrl: string) {}

  prepare(task: Pick<Task, 'kind' | 'model' | 'input'>): PreparedRequest {
    if (task.kind === 'render') throw new InvalidInput('renders run on this machine, not at a provider');
    const input = task.input as Record<string, unknown> | null;
    if (!input || typeof input !== 'object' || Array.isArray(input)) {
      throw new InvalidInput('the input must be a JSON object, for example {"prompt": "a red fox"}');
    }
    const text = task.kind === 'speech' ? input.text : input.prompt;
    if (typeof text !== 'string' || !text.trim()) {
      throw new InvalidInput(task.kind === 'speech' ? 'speech needs a "text" to say' : `an ${task.kind} needs a "prompt"`);
    }
    if (input.duration !== undefined && !(typeof input.duration === 'number' && input.duration > 0 && input.duration <= 60)) {
      throw new InvalidInput('"duration" must be a number of seconds between 0 and 60');
    }
    return { kind: task.kind, model: task.model, body: JSON.stringify({ input }) };
  }

  async submit(request: PreparedRequest, options: { idempotencyKey: string; signal?: AbortSignal }): Promise<SubmitResult> {
    let res: HttpResponse;
    try {
      res = await send('POST', `${this.baseUrl}/v1/${request.kind}/${encodeURIComponent(request.model)}/requests`, {
        headers: { 'content-type': 'application/json', 'idempotency-key': options.idempotencyKey },
        body: request.body as string,
        timeouts: SUBMIT_TIMEOUTS,
        signal: options.signal,
      });
    } catch (err) {
      if (err instanceof TransportError) throw new SubmitError(transportFailure(err));
      throw err;
    }
    if (res.status !== 201 && res.status !== 200) {
      throw new SubmitError(classifySubmitStatus(res.status, await errorText(res), retryAfterMs(res.headers, Date.now())));
    }
    try {
      const body = obj(await readJson(res), 'answer');
      return { requestId: str(body.request_id, 'request_id'), quote: money(body.quote), result: null };
    } catch (err) {
      // Accepted (2xx) but unreadable: it was applied and we cannot address it.
      throw new SubmitError({ kind: 'maybe_applied', message: (err as Error).message });
    }
  }

  async poll(requestId: string, signal?: AbortSignal): Promise<PollResult> {
    const id = encodeURIComponent(requestId);
    const res = await send('GET', `${this.baseUrl}/v1/requests/${id}/status`, { timeouts: POLL_TIMEOUTS, signal });
    if (res.status !== 200) throw new Error(await errorText(res));
    const body = obj(await readJson(res), 'status');
    switch (body.status) {
      case 'IN_QUEUE':
      case 'IN_PROGRESS':
        return { state: 'pending', progress: typeof body.progress === 'number' ? body.progress : null };
      case 'FAILED':
        return { state: 'failed', error: String(body.error ?? 'the provider reported a failure'), costActual: null };
      case 'CANCELLED':
        return { state: 'failed', error: 'the request was cancelled at the provider', costActual: null };
      case 'COMPLETED':
        return { state: 'succeeded', result: await this.result(id, signal) };
      default:
        throw new Error(`the provider reported an unknown status ${JSON.stringify(body.status)}`);
    }
  }

  private async result(id: string, signal?: AbortSignal): Promise<ProviderResult> {
    const res = await send('GET', `${this.baseUrl}/v1/requests/${id}/result`, { timeouts: POLL_TIMEOUTS, signal });
    if (res.status !== 200) throw new Error(await errorText(res));
    const body = obj(await readJson(res), 'result');
    if (!Array.isArray(body.outputs) || body.outputs.length === 0) throw new Error('the provider sent a result with no outputs');
    const outputs: ProviderOutput[] = body.outputs.map((o: unknown) => {
      const out = obj(o, 'output');
      return { url: str(out.url, 'output url'), contentType: typeof out.content_type === 'string' ? out.content_type : null };
    });
    return { outputs, costActual: money(body.cost) };
  }

  async download(output: ProviderOutput, signal?: AbortSignal): Promise<AsyncIterable<Uint8Array>> {
    const res = await send('GET', output.url, { timeouts: DOWNLOAD_TIMEOUTS, signal });
    if (res.status !== 200) {
      await res.body.dump();
      throw new Error(`the result could not be downloaded (HTTP ${res.status})`);
    }
    return res.body;
  }

  async cancel(requestId: string): Promise<void> {
    const res = await send('PUT', `${this.baseUrl}/v1/requests/${encodeURIComponent(requestId)}/cancel`, {
      timeouts: POLL_TIMEOUTS,
    });
    await res.body.dump();
  }
}
