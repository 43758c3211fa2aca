import type { Media } from '../../main/simulator/media.ts';
import type { Ledger } from './providers.ts';
import type { UsageCharge } from './falPlatform.ts';
import { send, type Route } from './server.ts';

export const FLUX = 'fal-ai/flux/dev';
export const KLING = 'fal-ai/kling-video/v2.1/standard/image-to-video';

/** A request in fal's history: it is listed once it has ended. */
export interface HistoryEntry {
  id: string;
  model: string;
  sentAt: number;
  endedAt: number;
  input: unknown;
}

export interface FalStandInOptions {
  /** How long a request takes from its submit to its end. */
  jobMs: number;
  /** Whether to cut the n-th submit's connection once the request is queued and charged, before any byte of the answer. */
  dropAnswer?: (n: number, model: string) => boolean;
  /** The listing answers 500 with no body fal documents. */
  listingFails?: boolean;
  /** The first upload's start answers 503. */
  uploadFailsOnce?: boolean;
  /** The n-th submit is answered this way instead, queueing and charging nothing (a rate limit). */
  submitAnswer?: (n: number, model: string) => { status: number; body: unknown } | null;
  /** The n-th upload's start answers this instead (a refusal, or an answer with no upload_url). */
  uploadAnswer?: (n: number) => { status: number; body: unknown } | null;
  /** The n-th PUT of a file is answered only once this settles (a stalled storage). */
  holdPut?: (n: number) => Promise<void> | null;
  /** A listing page answered instead of the one fal would give (`normal`): a cursor that never ends. */
  listingPage?: (query: URLSearchParams, normal: () => unknown) => unknown;
  /** fal's clock, for whether a request has ended, where a test moves the studio's on (test/helpers/clockShift.mjs). */
  now?: () => number;
  /**
   * The result of an ended request, once fal no longer keeps it, answered this way by its result URL, while its status
   * still says COMPLETED. fal keeps a result 1 hour, or 6 minutes when it is 10 KB or larger
   * (fal.ai/docs/inference-api/queue/result), and documents no answer for one it no longer has.
   */
  resultGone?: { status: number; body: unknown };
  /** With resultGone: once its result has been asked for, the request's status answers 404 too, as if fal forgot it. */
  forgetsGone?: boolean;
  /** The result's files answer 404: "Expired files are permanently deleted" from fal's CDN (fal.ai/docs/model-apis/data-retention). */
  filesGone?: boolean;
  /**
   * fal's usage ledger (falPlatform.ts falUsage): each request is charged at its end, FLUX per megapixel of 1024×1024
   * pixels rounded up per image at 0.025 USD in unit "image" as fal's usage docs name it, Kling per second at 0.056 USD
   * in unit "second" as this stand-in's pricing answer quotes it (resources/prices.json): a "video" is one clip.
   */
  usage?: UsageCharge[];
}

const falPixels = (size: unknown): number => {
  const named: Record<string, number> = { square_hd: 1024 * 1024, square: 512 * 512, portrait_4_3: 768 * 1024, portrait_16_9: 576 * 1024, landscape_4_3: 1024 * 768, landscape_16_9: 1024 * 576 };
  if (size && typeof size === 'object') return ((size as { width?: number }).width ?? 512) * ((size as { height?: number }).height ?? 512);
  return named[typeof size === 'string' ? size : 'landscape_4_3']!;
};

function usageOf(model: string, input: Record<string, unknown>, at: number): UsageCharge {
  if (model === KLING) return { endpointId: model, at, unit: 'second', quantity: Number(input.duration ?? 5), unitPrice: 0.056 };
  const quantity = Math.ceil(falPixels(input.image_size) / (1024 * 1024)) * Number(input.num_images ?? 1);
  return { endpointId: model, at, unit: 'image', quantity, unitPrice: 0.025 };
}

export interface FalStandIn {
  route: Route;
  /** Requests made before the test (by other apps of the account), already ended, as fal lists them. */
  history: HistoryEntry[];
  /** Uploads to storage: the file name and the bytes PUT. */
  uploads: { name: string; contentType: string; bytes: number }[];
  /** Each listing page answered: the limit asked and the size of the answer. */
  pages: { limit: number; payloads: boolean; bytes: number }[];
}

/**
 * fal for FLUX and Kling (fal.ai/docs/inference-api): the queue (submit, status 202/200, result, no status
 * stream), its storage as fal-js uploads to it (libs/client/src/storage.ts: POST /storage/upload/initiate answers
 * {upload_url, file_url}, the bytes are PUT to upload_url), and the request history
 * (fal.ai/docs/platform-apis/v1/models/requests/by-endpoint.md): requests that have ended, by end time, newest
 * first, `limit` at most 100 with a cursor counting pages, `json_input` with expand=payloads.
 */
export function falStandIn(ledger: Ledger, media: { png: Media; clip: Media }, opts: FalStandInOptions): FalStandIn {
  let next = 0;
  let stored = 0;
  let refusedUpload = false;
  let initiated = 0;
  let submits = 0;
  let puts = 0;
  const uploads: FalStandIn['uploads'] = [];
  const pages: FalStandIn['pages'] = [];
  const history: HistoryEntry[] = [];
  const queued = new Map<string, HistoryEntry>();
  const ended = (r: HistoryEntry) => r.endedAt <= (opts.now ?? Date.now)();
  const forgotten = new Set<string>();

  const route: Route = async (req, res) => {
    const host = `http://${req.headers.host}`;
    const url = new URL(req.path, host);
    const model = [FLUX, KLING].find((m) => url.pathname === `/${m}`);
    if (req.method === 'POST' && model) {
      const refused = opts.submitAnswer?.(++submits, model);
      if (refused) return send(res, refused.status, refused.body);
      const n = ++next;
      const id = `fal-req-${n}`;
      ledger.charged.push(id);
      const at = Date.now();
      queued.set(id, { id, model, sentAt: at, endedAt: at + opts.jobMs, input: JSON.parse(req.body) });
      opts.usage?.push(usageOf(model, JSON.parse(req.body), at + opts.jobMs));
      if (opts.dropAnswer?.(n, model)) return void res.socket?.destroy();
      const [owner, app] = model.split('/');
      const base = `${host}/${owner}/${app}/requests/${id}`;
      return send(res, 200, { request_id: id, status_url: `${base}/status`, response_url: base, cancel_url: `${base}/cancel` }, { 'x-fal-request-id': id });
    }
    const asked = /^\/fal-ai\/[\w-]+\/requests\/([\w-]+)(\/status\/stream|\/status)?$/.exec(url.pathname);
    if (asked) {
      const r = queued.get(asked[1]!);
      if (!r || forgotten.has(r.id)) return send(res, 404, { detail: 'request not found' });
      if (asked[2] === '/status/stream') return send(res, 404, { detail: 'Not Found' });
      if (asked[2] === '/status') {
        return ended(r) ? send(res, 200, { status: 'COMPLETED', request_id: r.id, logs: [], metrics: {} }) : send(res, 202, { status: 'IN_QUEUE', queue_position: 0, request_id: r.id });
      }
      if (!ended(r)) return send(res, 400, { detail: 'Request is still in progress' });
      if (opts.resultGone) {
        if (opts.forgetsGone) forgotten.add(r.id);
        return send(res, opts.resultGone.status, opts.resultGone.body);
      }
      if (r.model === KLING) return send(res, 200, { video: { url: `${host}/files/${r.id}.mp4`, content_type: 'video/mp4' } });
      return send(res, 200, { images: [{ url: `${host}/files/${r.id}.png`, content_type: 'image/png' }], seed: 7 });
    }
    if (url.pathname.startsWith('/files/')) {
      if (opts.filesGone) return send(res, 404, { detail: 'Not Found' });
      const file = url.pathname.endsWith('.mp4') ? media.clip : media.png;
      return send(res, 200, file.bytes, { 'content-type': file.contentType });
    }
    if (req.method === 'POST' && url.pathname === '/storage/upload/initiate') {
      if (opts.uploadFailsOnce && !refusedUpload) {
        refusedUpload = true;
        return send(res, 503, { detail: 'Service Unavailable' });
      }
      const instead = opts.uploadAnswer?.(++initiated);
      if (instead) return send(res, instead.status, instead.body);
      const { file_name: name, content_type: contentType } = JSON.parse(req.body) as { file_name: string; content_type: string };
      const key = ++stored;
      uploads.push({ name, contentType, bytes: -1 });
      return send(res, 200, { upload_url: `${host}/upload/${key}?signed=1`, file_url: `${host}/stored/${key}/${name}` });
    }
    if (req.method === 'PUT' && url.pathname.startsWith('/upload/')) {
      const upload = uploads[Number(url.pathname.split('/')[2]) - 1]!;
      upload.bytes = Number(req.headers['content-length']);
      upload.contentType = String(req.headers['content-type']);
      await opts.holdPut?.(++puts);
      return send(res, 200, {});
    }
    if (url.pathname === '/v1/models/requests/by-endpoint') {
      if (opts.listingFails) return send(res, 500, 'Internal Server Error');
      const q = url.searchParams;
      const [from, to] = [Date.parse(q.get('start') ?? ''), Date.parse(q.get('end') ?? '')];
      const items = [...history, ...queued.values()]
        .filter((r) => r.model === q.get('endpoint_id') && ended(r) && r.endedAt >= from && r.endedAt <= to)
        .sort((a, b) => b.endedAt - a.endedAt)
        .map((r) => ({
          request_id: r.id,
          endpoint_id: r.model,
          sent_at: new Date(r.sentAt).toISOString(),
          started_at: new Date(r.sentAt).toISOString(),
          ended_at: new Date(r.endedAt).toISOString(),
          status_code: 200,
          duration: (r.endedAt - r.sentAt) / 1000,
          ...(q.get('expand') === 'payloads' ? { json_input: r.input } : {}),
        }));
      const limit = Math.min(100, Number(q.get('limit') ?? 50));
      const page = Number(Buffer.from(q.get('cursor') ?? 'MA==', 'base64').toString());
      const more = (page + 1) * limit < items.length;
      const normal = () => ({ items: items.slice(page * limit, (page + 1) * limit), has_more: more, next_cursor: more ? Buffer.from(String(page + 1)).toString('base64') : null });
      const body = JSON.stringify(opts.listingPage ? opts.listingPage(q, normal) : normal());
      pages.push({ limit, payloads: q.get('expand') === 'payloads', bytes: Buffer.byteLength(body) });
      return send(res, 200, Buffer.from(body), { 'content-type': 'application/json' });
    }
    if (url.pathname === '/v1/models/pricing') {
      const id = url.searchParams.get('endpoint_id');
      const price = id === KLING ? { unit_price: 0.056, unit: 'second' } : { unit_price: 0.025, unit: 'megapixels' };
      return send(res, 200, { prices: [{ endpoint_id: id, ...price, currency: 'USD' }] });
    }
  };
  return { route, history, uploads, pages };
}
