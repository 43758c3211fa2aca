import { send, type Route } from './server.ts';

/**
 * fal's pricing endpoint, GET /v1/models/pricing (fal.ai/docs/platform-apis/v1/models/pricing.md, read 2026-12-02):
 * "Authentication: Required", `Authorization: Key <key>`; `endpoint_id` 1 to 50 ids, comma-separated or repeated;
 * the answer `{prices: [{endpoint_id, unit_price, unit, currency}], next_cursor, has_more}`, as its example
 * `{"endpoint_id": "fal-ai/flux/dev", "unit_price": 0.025, "unit": "image", "currency": "USD"}`.
 */
export function falPricing(prices: Record<string, { unit: string; unit_price: number }>): Route {
  return (req, res) => {
    const url = new URL(req.path, 'http://fal.test');
    if (url.pathname !== '/v1/models/pricing') return;
    if (!/^Key \S+/.test(String(req.headers.authorization ?? ''))) return send(res, 401, { detail: 'Unauthorized' });
    const ids = url.searchParams.getAll('endpoint_id').flatMap((v) => v.split(','));
    const found = ids.filter((id) => prices[id]).map((id) => ({ endpoint_id: id, ...prices[id]!, currency: 'USD' }));
    return send(res, 200, { prices: found, next_cursor: null, has_more: false });
  };
}

/** One billed request in the stand-in's ledger: what fal sums into its usage buckets. */
export interface UsageCharge {
  endpointId: string;
  /** When fal recorded the charge, ms. */
  at: number;
  unit: string;
  quantity: number;
  unitPrice: number;
}

export interface FalUsage {
  route: Route;
  /** Every charge fal recorded for the workspace: this studio's requests and any other app's. */
  ledger: UsageCharge[];
  /** Answer every usage call this way instead (a 5xx, say). */
  answer: { status: number; body: unknown } | null;
  /** Usage calls seen, with the key each carried. */
  calls: { key: string; query: URLSearchParams }[];
}

const HOUR = 3_600_000;

/**
 * fal's usage endpoint, GET /v1/models/usage (fal.ai/docs/platform-apis/v1/models/usage.md, read 2026-12-02): an
 * admin key only ("Admin API key must be prefixed with "Key ""), any other answered 401 (403 for an API-scope key);
 * `start`/`end`, `endpoint_id`, `timeframe` (here hour, the one the studio asks), `bound_to_timeframe`; the answer
 * `{time_series: [{bucket, results: [{endpoint_id, unit, quantity, unit_price, cost, currency}]}], next_cursor,
 * has_more}`, usage summed per endpoint and unit price in each bucket, cost = quantity × unit_price.
 */
export function falUsage(keys: { admin: string; apiScope?: string }): FalUsage {
  const usage: FalUsage = { route: () => undefined, ledger: [], answer: null, calls: [] };
  usage.route = (req, res) => {
    const url = new URL(req.path, 'http://fal.test');
    if (url.pathname !== '/v1/models/usage') return;
    const key = String(req.headers.authorization ?? '').replace(/^Key /, '');
    usage.calls.push({ key, query: url.searchParams });
    if (usage.answer) return send(res, usage.answer.status, usage.answer.body);
    if (keys.apiScope && key === keys.apiScope) return send(res, 403, { detail: 'Admin API key required' });
    if (key !== keys.admin) return send(res, 401, { detail: 'Invalid API key' });
    const q = url.searchParams;
    const ids = q.getAll('endpoint_id').flatMap((v) => v.split(','));
    const from = Math.floor(Date.parse(q.get('start') ?? '') / HOUR) * HOUR;
    const to = Math.ceil(Date.parse(q.get('end') ?? '') / HOUR) * HOUR;
    const buckets = new Map<number, Map<string, { endpoint_id: string; unit: string; quantity: number; unit_price: number }>>();
    for (const c of usage.ledger) {
      if ((ids.length && !ids.includes(c.endpointId)) || c.at < from || c.at >= to) continue;
      const bucket = Math.floor(c.at / HOUR) * HOUR;
      const lines = buckets.get(bucket) ?? new Map();
      buckets.set(bucket, lines);
      const k = `${c.endpointId} ${c.unit} ${c.unitPrice}`;
      const line = lines.get(k) ?? { endpoint_id: c.endpointId, unit: c.unit, quantity: 0, unit_price: c.unitPrice };
      line.quantity += c.quantity;
      lines.set(k, line);
    }
    const time_series = [...buckets.entries()]
      .sort(([a], [b]) => a - b)
      .map(([bucket, lines]) => ({
        bucket: new Date(bucket).toISOString().replace('.000Z', '+00:00'),
        results: [...lines.values()].map((l) => ({ ...l, cost: Math.round(l.quantity * l.unit_price * 1e9) / 1e9, currency: 'USD' })),
      }));
    return send(res, 200, { time_series, next_cursor: null, has_more: false });
  };
  return usage;
}
