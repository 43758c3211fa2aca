import type { AdapterConfig } from './config.ts';
import type { HttpResponse } from '../http/client.ts';
import { PollError, SubmitError, type ProviderOutput } from './port.ts';
import { MissingKey } from './invalidInput.ts';

/** A JSON object from a provider, or a PollError saying the answer was not one. */
export function obj(value: unknown): Record<string, any> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new PollError('the provider sent an answer of an unexpected shape');
  return value as Record<string, any>;
}

export function requireKey(config: AdapterConfig, provider: string, variable: string): void {
  if (!config.key) throw new MissingKey(provider, variable);
}

const MEDIA_EXTENSIONS: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', webp: 'image/webp', mp4: 'video/mp4', mp3: 'audio/mpeg', wav: 'audio/wav' };

function guessType(url: string): string | null {
  const ext = /\.(\w+)(?:\?|$)/.exec(url)?.[1]?.toLowerCase();
  return (ext && MEDIA_EXTENSIONS[ext]) ?? null;
}

/**
 * Every file in a model's result, in order, whatever its shape: a URL, a list of them (`num_images`,
 * `num_outputs` above 1), `{url, content_type}` objects, or fields such as `images`, `video`, `audio`,
 * `audio_url` holding those (fal and Replicate models vary).
 */
export function collectOutputs(value: unknown): ProviderOutput[] {
  if (typeof value === 'string') return /^(https?:|data:)/.test(value) ? [{ url: value, contentType: guessType(value) }] : [];
  if (Array.isArray(value)) return value.flatMap(collectOutputs);
  if (!value || typeof value !== 'object') return [];
  const o = value as Record<string, unknown>;
  if (typeof o.url === 'string') {
    return [{ url: o.url, contentType: typeof o.content_type === 'string' ? o.content_type : guessType(o.url) }];
  }
  return ['images', 'image', 'video', 'videos', 'audio', 'audio_url', 'audio_file', 'output'].flatMap((k) => (k in o ? collectOutputs(o[k]) : []));
}

/**
 * Reads a whole binary answer (synchronous audio), up to a limit; an unreadable one is an unknown outcome,
 * its message naming the request id the headers gave (the engine already has it).
 */
export async function readAll(res: HttpResponse, limit: number, provider: string, requestId?: string): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of res.body) {
      size += chunk.byteLength;
      if (size > limit) throw new Error(`more than ${limit} bytes`);
      chunks.push(chunk);
    }
  } catch (err) {
    const named = requestId ? `; ${provider} request id ${requestId}` : '';
    throw new SubmitError({ kind: 'maybe_applied', message: `${provider} sent the result but it could not be read whole (${(err as Error).message}${named})` });
  }
  return Buffer.concat(chunks);
}

export function header(res: HttpResponse, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * The name of a synchronous result whose answer came whole but without the provider's id header (a proxy
 * may drop it). The row needs an id; the attempt's idempotency key, already on the row, is used rather
 * than an invented one, marked local so no one takes it for the provider's.
 */
export function localRequestId(idempotencyKey: string): string {
  return `local:${idempotencyKey}`;
}
