import { Readable } from 'node:stream';
import type { SubmitFailure } from '../domain/submitOutcome.ts';
import { PollError, SubmitError, TooLargeAnswer, type ProviderOutput, type SubmitOptions } from './port.ts';
import { AnswerTooLarge, classifySubmitStatus, readJson, retryAfterMs, send, TransportError, type HttpResponse, type HttpTimeouts } from '../http/client.ts';
import { eventData } from '../http/sse.ts';

export interface CallTimeouts {
  submit: HttpTimeouts;
  poll: HttpTimeouts;
  download: HttpTimeouts;
}

export const DEFAULT_TIMEOUTS: CallTimeouts = {
  submit: { headersMs: 60_000, bodyMs: 60_000 },
  poll: { headersMs: 15_000, bodyMs: 15_000 },
  // A video file may take minutes on a slow link; the total still bounds a drip.
  download: { headersMs: 30_000, bodyMs: 120_000, totalMs: 15 * 60_000 },
};

/**
 * A status stream is open as long as the request runs (its caller's signal ends it); only silence ends it
 * here, well past the 15 s keep-alive comment fal documents (fal.ai/docs/inference-api/queue/status-stream).
 */
const STREAM_TIMEOUTS: HttpTimeouts = { headersMs: 15_000, bodyMs: 45_000, totalMs: 24 * 60 * 60_000 };

/** An answer to a status, result, cancel or listing call. */
export interface Answer {
  status: number;
  json: unknown;
  headers: HttpResponse['headers'];
}

export interface ProviderHttpConfig {
  /** The provider's name as a person knows it, for messages. */
  name: string;
  baseUrl: string;
  /** Headers on every call, the credentials among them; their values never reach a message. */
  headers: Record<string, string>;
  timeouts?: Partial<CallTimeouts>;
  /** Whether the provider documents a failure with this status as never billed. */
  neverBilled?: (status: number) => boolean;
  /** The response header in which the provider names the request, read before the body. */
  requestIdHeader?: string;
  /** The environment variable the key may come from (besides Settings), named when the key is refused. */
  keyVariable?: string;
  /**
   * Reads the provider's own error body for a refusal the person must act on (out of credit, out of
   * characters, a locked account): its message in plain words, or null. Such a request was refused before
   * it was accepted, so a submit that meets one fails at once and is never sent again.
   */
  accountRefusal?: (status: number, body: unknown) => string | null;
}

/** Pulls a readable message out of the error bodies providers send. */
export function errorDetail(body: unknown): string | null {
  if (typeof body === 'string') return body.slice(0, 300) || null;
  if (!body || typeof body !== 'object') return null;
  const b = body as Record<string, any>;
  const detail = b.detail ?? b.error ?? b.message ?? b.title;
  if (typeof detail === 'string') return detail.slice(0, 300);
  if (Array.isArray(detail)) return detail.map((d) => d?.msg ?? d?.message ?? JSON.stringify(d)).join('; ').slice(0, 300);
  if (detail && typeof detail === 'object') return errorDetail(detail);
  return null;
}

/** The provider's answer in words a creator can act on. */
export function plainProblem(name: string, status: number, detail: string | null, keyVariable?: string): string {
  const said = detail ? `: ${detail}` : '';
  if (status === 401 || status === 403) {
    const where = keyVariable ? `in Settings, or in ${keyVariable} where the key comes from the environment` : 'in Settings';
    return `${name} refused the API key (HTTP ${status}${said}); fix the ${name} key ${where}`;
  }
  if (status === 402) return `${name} says the account has no credit left; add credit, then try again (HTTP 402${said})`;
  if (status === 429) return `${name} is rate limiting; the studio will wait and try again (HTTP 429${said})`;
  if (status === 400 || status === 422) return `${name} refused the input${said} (HTTP ${status})`;
  if (status === 404) return `${name} does not know this model or request (HTTP 404${said})`;
  if (status >= 500) return `${name} had a problem on its side (HTTP ${status}${said})`;
  return `${name} answered HTTP ${status}${said}`;
}

/**
 * One provider's HTTP: its base URL, credentials and timeouts per call kind, with every answer classified.
 * A submit is sent once and never resent here; status calls may be asked again, so their failures are
 * PollErrors carrying any Retry-After. Credentials are only ever headers and are scrubbed from messages.
 */
export class ProviderHttp {
  private readonly timeouts: CallTimeouts;
  private readonly secrets: string[];

  constructor(private readonly config: ProviderHttpConfig) {
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...config.timeouts };
    this.secrets = Object.values(config.headers)
      .flatMap((v) => [v, v.split(' ').at(-1) ?? ''])
      .filter((v) => v.length >= 8);
  }

  url(path: string): string {
    return /^https?:\/\//.test(path) ? path : `${this.config.baseUrl.replace(/\/$/, '')}${path}`;
  }

  /** Removes any credential a provider might echo back in an error. */
  scrub(message: string): string {
    return this.secrets.reduce((m, s) => m.split(s).join('[key]'), message);
  }

  /** A refusal the person must act on, when the provider's body says so, else the answer in plain words. */
  private async problem(res: HttpResponse): Promise<{ message: string; refusal: boolean }> {
    return this.described(res.status, await readJson(res).catch(() => null));
  }

  private described(status: number, body: unknown): { message: string; refusal: boolean } {
    const refusal = this.config.accountRefusal?.(status, body) ?? null;
    return { message: this.scrub(refusal ?? plainProblem(this.config.name, status, errorDetail(body), this.config.keyVariable)), refusal: refusal !== null };
  }

  /**
   * POSTs a paid request once. Returns the response of a 2xx; anything else is a classified SubmitError.
   * A request id in the headers of any answer that may follow an acceptance (2xx, 408, 5xx) reaches
   * `options.onRequestId` before the body is read.
   */
  async submit(
    path: string,
    body: string | Buffer,
    headers: Record<string, string>,
    options: Pick<SubmitOptions, 'signal' | 'onRequestId'> = {},
  ): Promise<HttpResponse> {
    const { signal } = options;
    let res: HttpResponse;
    try {
      res = await send('POST', this.url(path), {
        headers: { ...this.config.headers, ...headers },
        body,
        timeouts: this.timeouts.submit,
        signal,
      });
    } catch (err) {
      if (!(err instanceof TransportError)) throw err;
      const failure: SubmitFailure = { kind: err.sent ? 'maybe_applied' : 'never_sent', message: this.scrub(`${this.config.name}: ${err.message}`) };
      throw new SubmitError(failure);
    }
    const named = this.config.requestIdHeader && res.headers[this.config.requestIdHeader];
    const requestId = Array.isArray(named) ? named[0] : named;
    const mayBeAccepted = (res.status >= 200 && res.status < 300) || res.status === 408 || res.status >= 500;
    if (requestId && mayBeAccepted) options.onRequestId?.(requestId);
    if (res.status >= 200 && res.status < 300) return res;
    const idNote = requestId && mayBeAccepted ? ` (its request id: ${requestId})` : '';
    const problem = await this.problem(res);
    if (problem.refusal) throw new SubmitError({ kind: 'rejected', message: `${problem.message}${idNote}` });
    const failure = classifySubmitStatus(res.status, `${problem.message}${idNote}`, retryAfterMs(res.headers, Date.now()));
    throw new SubmitError({ ...failure, neverBilled: this.config.neverBilled?.(res.status) ?? false });
  }

  /** Reads an accepted submit's JSON; an unreadable answer to a request that was applied is an unknown outcome. */
  async acceptedJson(res: HttpResponse): Promise<Record<string, unknown>> {
    try {
      const body = await readJson(res);
      if (!body || typeof body !== 'object' || Array.isArray(body)) throw new Error('the answer is not a JSON object');
      return body as Record<string, unknown>;
    } catch (err) {
      throw new SubmitError({
        kind: 'maybe_applied',
        message: `${this.config.name} accepted the request but its answer could not be read (${(err as Error).message})`,
      });
    }
  }

  /**
   * A status, result, cancel or listing call whose error answers the caller reads itself (a provider's own
   * markers in them): an answer of any status comes back with its JSON (null when it has none). No answer
   * at all, or a 2xx that is not JSON, is a PollError; `failure` makes the usual one of an error answer.
   */
  async answer(path: string, signal?: AbortSignal, method: 'GET' | 'PUT' | 'POST' = 'GET', body?: string): Promise<Answer> {
    let res: HttpResponse;
    try {
      res = await send(method, this.url(path), {
        headers: body ? { ...this.config.headers, 'content-type': 'application/json' } : this.config.headers,
        body,
        timeouts: this.timeouts.poll,
        signal,
      });
    } catch (err) {
      if (err instanceof TransportError) throw new PollError(this.scrub(`${this.config.name}: ${err.message}`));
      throw err;
    }
    if (res.status < 200 || res.status >= 300) return { status: res.status, json: await readJson(res).catch(() => null), headers: res.headers };
    try {
      return { status: res.status, json: await readJson(res), headers: res.headers };
    } catch (err) {
      throw new (err instanceof AnswerTooLarge ? TooLargeAnswer : PollError)(`${this.config.name}: ${(err as Error).message}`);
    }
  }

  /** The PollError of an error answer: its problem in plain words, with any Retry-After. */
  failure(answer: Answer): PollError {
    return new PollError(this.described(answer.status, answer.json).message, retryAfterMs(answer.headers, Date.now()), answer.status);
  }

  /**
   * A status, result, cancel or listing call: the JSON of a 2xx answer, or a PollError carrying any
   * Retry-After. A 401, 403, 404 or 410 here is no proof that a paid result is gone (a key being changed,
   * an account briefly locked, a record not visible yet), so it is asked again later like a 5xx; an
   * adapter reads what its provider documents as gone from the answer itself. `answered` lists statuses
   * the caller reads itself (such as a 404 that means "try the other way").
   */
  async get(path: string, signal?: AbortSignal, method: 'GET' | 'PUT' | 'POST' = 'GET', body?: string, answered: readonly number[] = []): Promise<Answer> {
    const answer = await this.answer(path, signal, method, body);
    if ((answer.status >= 200 && answer.status < 300) || answered.includes(answer.status)) return answer;
    throw this.failure(answer);
  }

  /**
   * Follows a server-sent event stream, yielding each event's data parsed as JSON. Failing to open it, or an
   * answer that is not an event stream, is a PollError: the caller polls instead.
   */
  async *events(path: string, signal: AbortSignal): AsyncGenerator<unknown> {
    let res: HttpResponse;
    try {
      res = await send('GET', this.url(path), { headers: { ...this.config.headers, accept: 'text/event-stream' }, timeouts: STREAM_TIMEOUTS, signal });
    } catch (err) {
      if (err instanceof TransportError) throw new PollError(this.scrub(`${this.config.name}: ${err.message}`));
      throw err;
    }
    if (res.status < 200 || res.status >= 300) throw new PollError((await this.problem(res)).message, retryAfterMs(res.headers, Date.now()));
    const type = res.headers['content-type'];
    if (!String(type).startsWith('text/event-stream')) {
      await res.body.dump().catch(() => undefined);
      throw new PollError(`${this.config.name} answered the status stream with ${String(type)}`);
    }
    try {
      for await (const data of eventData(res.body)) {
        try {
          yield JSON.parse(data);
        } catch {
          throw new PollError(`${this.config.name} sent a status event that is not JSON`);
        }
      }
    } catch (err) {
      if (err instanceof PollError) throw err;
      throw new PollError(this.scrub(`${this.config.name}: the status stream broke (${(err as Error).message})`));
    }
  }

  /**
   * Streams a result file. No provider here documents a status for an expired file, so every failure
   * (401, 403, 404, 410, 5xx, a cut connection) is a PollError, to be downloaded again later; a result
   * is lost only on what an adapter reads from its provider's documented answer (Replicate's data_removed).
   */
  async download(output: ProviderOutput, signal?: AbortSignal, withCredentials = false): Promise<AsyncIterable<Uint8Array>> {
    if (output.bytes) return Readable.from([output.bytes]);
    if (!output.url) throw new PollError(`${this.config.name} gave no file for this result`);
    const data = /^data:[^;,]*;base64,(.*)$/s.exec(output.url);
    if (data) return Readable.from([Buffer.from(data[1]!, 'base64')]);
    let res: HttpResponse;
    try {
      res = await send('GET', output.url, { headers: withCredentials ? this.config.headers : {}, timeouts: this.timeouts.download, signal });
    } catch (err) {
      if (err instanceof TransportError) throw new PollError(this.scrub(`${this.config.name}: ${err.message}`));
      throw err;
    }
    if (res.status < 200 || res.status >= 300) throw new PollError(await this.fileProblem(res, withCredentials), retryAfterMs(res.headers, Date.now()), res.status);
    return res.body;
  }

  /**
   * A file's error answer in words about the file: a file URL names no model or request, and one fetched without the
   * key says nothing about the key. A refused key on a file fetched with it is said as a refused key.
   */
  private async fileProblem(res: HttpResponse, withCredentials: boolean): Promise<string> {
    if (withCredentials && (res.status === 401 || res.status === 403)) return (await this.problem(res)).message;
    const detail = errorDetail(await readJson(res).catch(() => null));
    return this.scrub(`${this.config.name}'s file of the result answered HTTP ${res.status}${detail ? ` (${detail})` : ''}`);
  }
}
