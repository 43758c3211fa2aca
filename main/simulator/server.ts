import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { canonicalJson } from '../tasks/inputHash.ts';
import { isKind, type Kind } from '../tasks/model.ts';
import { makeMedia } from './media.ts';
import { PRICES } from './prices.ts';

/**
 * The bundled provider: a real HTTP server on loopback speaking a queue API, so the studio runs with
 * no key and no network, and tests drive the engine through real sockets.
 *
 *   POST /v1/{kind}/{model}/requests      -> 201 {request_id, status, quote}
 *   GET  /v1/requests/{id}/status         -> {request_id, status, progress, error?}
 *   GET  /v1/requests/{id}/result         -> {outputs: [{url, content_type}], cost}
 *   PUT  /v1/requests/{id}/cancel
 *   GET  /v1/requests?created_after&created_before  -> {requests: [...]}
 *   GET  /files/{id}/{n}
 *   GET  /_sim/charges, POST /_sim/faults  (for tests and people who want to see faults)
 */

export type SubmitFault = 'drop-after-accept' | 'error-after-accept' | 'reject' | 'rate-limit' | 'server-error';

export interface Faults {
  /** Applied to the next submits, one each, in order. */
  submit?: SubmitFault[];
  /** Extra latency before every answer. */
  latencyMs?: number;
}

export interface Charge {
  requestId: string;
  idempotencyKey: string | null;
  inputHash: string;
  kind: Kind;
  model: string;
  quoted: number;
  at: number;
}

interface Job {
  id: string;
  kind: Kind;
  model: string;
  input: Record<string, unknown>;
  createdAt: number;
  durationMs: number;
  quote: number;
  billed: number;
  status: 'IN_QUEUE' | 'IN_PROGRESS' | 'COMPLETED' | 'FAILED' | 'CANCELLED';
  media?: { bytes: Buffer; contentType: string };
}

export interface SimulatorOptions {
  port?: number;
  /** How long a job takes, unless its input says `duration_ms`. */
  jobMs?: number;
}

export interface RunningSimulator {
  url: string;
  server: Server;
  charges: Charge[];
  setFaults(faults: Faults): void;
  close(): Promise<void>;
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Billing differs from the quote a little, as real invoices do. */
function billedFrom(quote: number, id: string): number {
  const wobble = (createHash('sha256').update(id).digest()[0]! / 255) * 0.3;
  return Math.round(quote * (1 + wobble));
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const jobs = new Map<string, Job>();
  const charges: Charge[] = [];
  let faults: Faults = {};
  const jobMs = options.jobMs ?? 3_000;

  const refresh = (job: Job): Job => {
    if (job.status === 'CANCELLED' || job.status === 'FAILED' || job.status === 'COMPLETED') return job;
    const elapsed = Date.now() - job.createdAt;
    job.status = elapsed >= job.durationMs ? 'COMPLETED' : elapsed >= job.durationMs * 0.1 ? 'IN_PROGRESS' : 'IN_QUEUE';
    return job;
  };

  const progressOf = (job: Job): number =>
    Math.min(1, Math.max(0, (Date.now() - job.createdAt) / Math.max(1, job.durationMs)));

  async function submit(req: IncomingMessage, res: ServerResponse, kind: Kind, model: string): Promise<void> {
    let input: Record<string, unknown>;
    try {
      const parsed = JSON.parse(await readBody(req)) as { input?: unknown };
      if (!parsed.input || typeof parsed.input !== 'object') throw new Error('missing input');
      input = parsed.input as Record<string, unknown>;
    } catch {
      return json(res, 422, { detail: 'the body must be JSON with an "input" object' });
    }
    const fault = faults.submit?.shift();
    if (fault === 'reject') return json(res, 422, { detail: 'input rejected by the simulator' });
    if (fault === 'rate-limit') return json(res, 429, { detail: 'slow down' }, { 'retry-after': '1' });
    if (fault === 'server-error') return json(res, 503, { detail: 'the simulator failed before accepting' });

    const quote = PRICES[kind] * (kind === 'clip' || kind === 'speech' ? Math.max(1, Number(input.duration ?? 1)) : 1);
    const job: Job = {
      id: randomUUID(),
      kind,
      model,
      input,
      createdAt: Date.now(),
      durationMs: Number(input.duration_ms ?? jobMs),
      quote,
      billed: 0,
      status: 'IN_QUEUE',
    };
    job.billed = billedFrom(quote, job.id);
    jobs.set(job.id, job);
    const key = req.headers['idempotency-key'];
    charges.push({
      requestId: job.id,
      idempotencyKey: typeof key === 'string' ? key : null,
      inputHash: createHash('sha256').update(canonicalJson({ model, input })).digest('hex'),
      kind,
      model,
      quoted: quote,
      at: job.createdAt,
    });
    if (fault === 'drop-after-accept') return void res.socket?.destroy();
    if (fault === 'error-after-accept') return json(res, 502, { detail: 'bad gateway after the job was queued' });
    json(res, 201, {
      request_id: job.id,
      status: job.status,
      quote: { amount: quote / 1e6, currency: 'USD' },
    });
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (faults.latencyMs) await new Promise((r) => setTimeout(r, faults.latencyMs));
    const url = new URL(req.url ?? '/', 'http://simulator');
    const parts = url.pathname.split('/').filter(Boolean);
    const base = `http://${req.headers.host}`;

    if (req.method === 'POST' && parts[0] === 'v1' && parts.length === 4 && parts[3] === 'requests') {
      const [, kind, model] = parts as [string, string, string];
      if (!isKind(kind)) return json(res, 404, { detail: `no such kind ${kind}` });
      return submit(req, res, kind, decodeURIComponent(model));
    }
    if (req.method === 'GET' && url.pathname === '/v1/requests') {
      const after = Number(url.searchParams.get('created_after') ?? 0);
      const before = Number(url.searchParams.get('created_before') ?? Number.MAX_SAFE_INTEGER);
      const list = [...jobs.values()]
        .filter((j) => j.createdAt >= after && j.createdAt <= before)
        .map((j) => ({ request_id: j.id, kind: j.kind, model: j.model, input: j.input, created_at: j.createdAt, status: refresh(j).status }));
      return json(res, 200, { requests: list });
    }
    if (parts[0] === 'v1' && parts[1] === 'requests' && parts[2]) {
      const job = jobs.get(parts[2]);
      if (!job) return json(res, 404, { detail: 'no such request' });
      refresh(job);
      if (req.method === 'GET' && parts[3] === 'status') {
        return json(res, 200, { request_id: job.id, status: job.status, progress: progressOf(job) });
      }
      if (req.method === 'GET' && parts[3] === 'result') {
        if (job.status !== 'COMPLETED') return json(res, 409, { detail: `request is ${job.status}` });
        return json(res, 200, {
          outputs: [{ url: `${base}/files/${job.id}/0`, content_type: (await mediaOf(job)).contentType }],
          cost: { amount: job.billed / 1e6, currency: 'USD' },
        });
      }
      if (req.method === 'PUT' && parts[3] === 'cancel') {
        if (job.status === 'COMPLETED') return json(res, 400, { status: 'ALREADY_COMPLETED' });
        job.status = 'CANCELLED';
        return json(res, 200, { status: 'CANCELLATION_REQUESTED' });
      }
    }
    if (req.method === 'GET' && parts[0] === 'files' && parts[1]) {
      const job = jobs.get(parts[1]);
      if (!job || refresh(job).status !== 'COMPLETED') return json(res, 404, { detail: 'no such file' });
      const media = await mediaOf(job);
      res.writeHead(200, { 'content-type': media.contentType, 'content-length': media.bytes.length });
      return void res.end(media.bytes);
    }
    if (req.method === 'GET' && url.pathname === '/_sim/charges') return json(res, 200, charges);
    if (req.method === 'POST' && url.pathname === '/_sim/faults') {
      faults = JSON.parse(await readBody(req)) as Faults;
      return json(res, 200, faults);
    }
    json(res, 404, { detail: 'not found' });
  }

  async function mediaOf(job: Job) {
    job.media ??= await makeMedia(job.kind, job.input);
    return job.media;
  }

  const server = createServer((req, res) => {
    route(req, res).catch((err: Error) => {
      if (!res.headersSent) json(res, 500, { detail: err.message });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    charges,
    setFaults: (f) => {
      faults = f;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
