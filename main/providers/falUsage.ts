/**
 * fal's usage records, GET https://api.fal.ai/v1/models/usage (fal.ai/docs/platform-apis/v1/models/usage.md, read
 * 2026-12-02). It needs an admin key ("Admin API key must be prefixed with "Key ", e.g. Authorization: Key
 * YOUR_ADMIN_API_KEY"; an API-scope key does not reach it: docs.fal.ai/documentation/model-apis/authentication/key-based).
 * Asked in hour buckets (`timeframe=hour`, `bound_to_timeframe=true`: the start aligned to the hour, the end
 * exclusive) for the endpoints named (`endpoint_id`, 1 to 50), page by page (`cursor`, `has_more`). Only GETs: it
 * reads what was billed and buys nothing.
 */
import { request } from 'undici';
import type { UsageLine } from '../pricing/falBills.ts';
import { FAL_API_URL } from './fal.ts';
import { scrubKey } from './keyScrub.ts';

export const USAGE_BUCKET_MS = 3_600_000;
const MAX_PAGES = 50;
const TIMEOUT_MS = 15_000;

export class UsageUnreadable extends Error {}

/** The reading ran past its overall limit (readFalUsage's `signal`) and was cut; the caller says how long it allowed. */
export class UsageCut extends UsageUnreadable {}

/** Every word built from fal's answer, a line or a bucket of it included, goes through scrubKey: should an answer echo the key, in any form, it is cut out. */
function linesOf(body: unknown, key: string): { lines: UsageLine[]; next: string | null } {
  const b = (body ?? {}) as { time_series?: unknown; next_cursor?: unknown; has_more?: unknown };
  if (!Array.isArray(b.time_series)) throw new UsageUnreadable('fal\'s usage API answered without the time_series it documents');
  const lines: UsageLine[] = [];
  for (const bucket of b.time_series as { bucket?: unknown; results?: unknown }[]) {
    const at = Date.parse(String(bucket.bucket));
    if (!Number.isFinite(at) || !Array.isArray(bucket.results)) throw new UsageUnreadable(`fal's usage API answered a bucket it does not document: ${scrubKey(JSON.stringify(bucket), key)}`);
    for (const r of bucket.results as Record<string, unknown>[]) {
      if (typeof r.endpoint_id !== 'string' || typeof r.quantity !== 'number' || typeof r.unit_price !== 'number' || typeof r.cost !== 'number') {
        throw new UsageUnreadable(`fal's usage API answered a line it does not document: ${scrubKey(JSON.stringify(r), key)}`);
      }
      lines.push({ bucket: at, endpointId: r.endpoint_id, unit: String(r.unit ?? ''), quantity: r.quantity, unitPrice: r.unit_price, cost: r.cost, currency: String(r.currency ?? 'USD') });
    }
  }
  return { lines, next: b.has_more === true && typeof b.next_cursor === 'string' ? b.next_cursor : null };
}

/**
 * Every usage line of `endpoints` from `from` to `to` (ms); throws UsageUnreadable with what fal answered. `signal`
 * bounds the whole reading, every page and every body: an answer that drips a byte at a time passes each per-read
 * timeout, and only an overall limit ends it.
 */
export async function readFalUsage(adminKey: string, baseUrl: string | null, endpoints: readonly string[], from: number, to: number, signal?: AbortSignal): Promise<UsageLine[]> {
  const lines: UsageLine[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < MAX_PAGES; page++) {
    const q = new URLSearchParams({ start: new Date(from).toISOString(), end: new Date(to).toISOString(), timeframe: 'hour', bound_to_timeframe: 'true', timezone: 'UTC', expand: 'time_series' });
    for (const id of endpoints) q.append('endpoint_id', id);
    if (cursor) q.set('cursor', cursor);
    let status: number;
    let text: string;
    try {
      const res = await request(`${baseUrl ?? FAL_API_URL}/v1/models/usage?${q}`, {
        headers: { authorization: `Key ${adminKey}`, accept: 'application/json' },
        headersTimeout: TIMEOUT_MS,
        bodyTimeout: TIMEOUT_MS,
        signal,
      });
      status = res.statusCode;
      text = await res.body.text();
    } catch (err) {
      if (signal?.aborted) throw new UsageCut();
      throw new UsageUnreadable(`fal's usage API could not be reached (${scrubKey((err as Error).message, adminKey)})`);
    }
    if (status === 401 || status === 403) {
      throw new UsageUnreadable(`fal's usage API refused the admin key (HTTP ${status}: ${scrubKey(text, adminKey)}); check it in Settings, under fal: it must be an ADMIN-scope key`);
    }
    if (status < 200 || status >= 300) throw new UsageUnreadable(`fal's usage API answered HTTP ${status} (${scrubKey(text, adminKey)}); it is asked again next time`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new UsageUnreadable(`fal's usage API answered something that is not JSON: ${scrubKey(text, adminKey)}`);
    }
    const { lines: got, next } = linesOf(body, adminKey);
    lines.push(...got);
    if (!next) return lines;
    cursor = next;
  }
  throw new UsageUnreadable(`fal's usage API had more than ${MAX_PAGES} pages for this window`);
}
