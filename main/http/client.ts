import { Agent, errors as undiciErrors, request } from 'undici';
import type { SubmitFailure } from '../domain/submitOutcome.ts';

/** One agent for the whole process. undici retries nothing by itself; no POST is ever resent here. */
const agent = new Agent({ connectTimeout: 10_000, keepAliveTimeout: 10_000 });

export interface HttpTimeouts {
  headersMs: number;
  /** undici's body timeout is only the longest silence between two chunks. */
  bodyMs: number;
  /** The whole call, headers and body, however the answer trickles; headers plus body when not given. */
  totalMs?: number;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: AsyncIterable<Uint8Array> & { text(): Promise<string>; dump(): Promise<void> };
}

/** The request never reached the provider, or did and no definitive answer came back. */
export class TransportError extends Error {
  constructor(
    message: string,
    readonly sent: boolean,
  ) {
    super(message);
  }
}

const NEVER_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'ERR_INVALID_URL',
]);

function errorCode(err: unknown): string | undefined {
  const e = err as { code?: string; cause?: { code?: string } };
  return e?.code && e.code !== 'UND_ERR_SOCKET' ? e.code : (e?.cause?.code ?? e?.code);
}

export async function send(
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  options: { headers?: Record<string, string>; body?: string | Buffer; timeouts: HttpTimeouts; signal?: AbortSignal },
): Promise<HttpResponse> {
  // The deadline also ends a body read after this returns: a provider that drips its answer holds nothing for long.
  const totalMs = options.timeouts.totalMs ?? options.timeouts.headersMs + options.timeouts.bodyMs;
  const deadline = AbortSignal.timeout(totalMs);
  try {
    const res = await request(url, {
      method,
      headers: options.headers,
      body: options.body,
      dispatcher: agent,
      headersTimeout: options.timeouts.headersMs,
      bodyTimeout: options.timeouts.bodyMs,
      signal: options.signal ? AbortSignal.any([options.signal, deadline]) : deadline,
    });
    return { status: res.statusCode, headers: res.headers, body: res.body };
  } catch (err) {
    const code = errorCode(err);
    const sent = !(code && NEVER_SENT_CODES.has(code)) && !(err instanceof undiciErrors.ConnectTimeoutError);
    const why = deadline.aborted ? `no whole answer within ${Math.round(totalMs / 1000)} s` : `${code ?? (err as Error).name}: ${(err as Error).message}`;
    throw new TransportError(why, sent);
  }
}

/** An answer over the size the studio reads: asking again for the same gets the same, so ask for less. */
export class AnswerTooLarge extends Error {}

/** Reads a JSON body up to a size limit: a provider's garbage is an error on the task, never a crash. */
export async function readJson(res: HttpResponse, limitBytes = 1 << 20): Promise<unknown> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += chunk.byteLength;
    if (size > limitBytes) {
      await res.body.dump().catch(() => undefined);
      throw new AnswerTooLarge(`the provider's answer was larger than ${limitBytes} bytes`);
    }
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`the provider's answer was not JSON: ${text.slice(0, 120)}`);
  }
}

export function retryAfterMs(headers: HttpResponse['headers'], now: number): number | undefined {
  const value = headers['retry-after'];
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Generic reading of a submit's status code. 408 and 5xx may come from a gateway or a load balancer after
 * the provider took the request in, and no provider used here documents otherwise for its submit, so
 * they are "maybe applied"; only a provider's own refusal (other 4xx) and 429 mean nothing was applied.
 */
export function classifySubmitStatus(status: number, message: string, retryAfter?: number): SubmitFailure {
  if (status === 429) return { kind: 'rate_limited', message, retryAfterMs: retryAfter };
  if (status === 408 || status >= 500 || status < 400) return { kind: 'maybe_applied', message };
  return { kind: 'rejected', message };
}
