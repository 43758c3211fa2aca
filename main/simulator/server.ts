import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { canonicalJson } from '../domain/tasks/inputHash.ts';
import { checkLoopback, sameSecret } from '../http/requestGate.ts';
import { isKind, type Kind } from '../domain/tasks/model.ts';
import { nextFault, parseFaults, seededRandom, type Faults } from './faults.ts';
import { makeMedia } from './media.ts';
import type { Charge, Job, SavedJob } from './job.ts';
import { JobStore } from './jobStore.ts';
import { SIMULATOR_MODELS } from './models.ts';
import { quoteFor } from './prices.ts';
import { drawSecret, folderSecret } from './secret.ts';

/**
 * The bundled provider: a real HTTP server on loopback speaking a queue API, so the studio runs with
 * no key and no network, and tests drive the engine through real sockets.
 *
 * Its address is `http://127.0.0.1:{port}/{secret}`, and every path below is under it. Like the loopback host it
 * refuses a foreign Host or Origin (main/http/requestGate.ts), and a path without the secret is not found: a web
 * page open on this machine can neither list its jobs nor set its faults. The secret is kept in the job folder
 * (secret.ts), so every simulator on a data folder has the same one; without a folder it is drawn for the run.
 *
 *   POST /v1/{kind}/{model}/requests   {input}  -> 201 {request_id, status, quote: {amount, currency}}; 404 for a model it lacks
 *   GET  /v1/requests/{id}/status                -> {request_id, status, progress, error?}
 *   GET  /v1/requests/{id}/status/stream         -> server-sent events, each `data:` the status object above: one at
 *                                                   once, one a second with the progress, the last when the job ends,
 *                                                   then the stream closes; a comment line every 15 s (as fal's)
 *   GET  /v1/requests/{id}/result                -> {outputs: [{url, content_type}], cost: {amount, currency}}
 *   PUT  /v1/requests/{id}/cancel
 *   GET  /v1/requests?created_after=MS&created_before=MS  -> {requests: [{request_id, model, input, created_at, status}]}
 *   GET  /files/{id}/0                           -> the media
 *   GET  /_sim/charges, GET /_sim/faults-injected, POST /_sim/faults   (to watch and to inject faults)
 *
 * Status is IN_QUEUE, IN_PROGRESS, COMPLETED, FAILED or CANCELLED. Amounts are in currency units.
 *
 * What its answers mean, for money:
 *   - Every answer to a submit that follows the acceptance names the request in `x-request-id`, sent with
 *     the headers before any body; the request is charged once, at acceptance, whatever comes after (a job
 *     that then fails or is cancelled stays charged).
 *   - 503 to a submit is the one answer documented as never billed: nothing was accepted. Any other 5xx,
 *     or a cut connection, may come after the request was accepted and charged.
 *   - 410 on a result's file is the one answer that means a paid result is gone (it expired). A 404 means
 *     this simulator does not know the id (yet); it, and any other error on a GET, is worth asking again.
 *
 * Every simulator started on the same `stateDir` shares one job store: a job accepted by one is known
 * to the others, and is charged once in all their ledgers, even after the one that accepted it is gone.
 */

export interface InjectedFault {
  at: number;
  fault: string;
  requestId: string | null;
  idempotencyKey: string | null;
}

export interface SimulatorOptions {
  port?: number;
  /**
   * Where accepted jobs are kept, so a simulator started again still knows them, as a real provider would;
   * simulators in other processes on the same folder share them, and the secret in their address.
   */
  stateDir?: string;
  /** How long a job takes, unless its input says `duration_ms`. */
  jobMs?: number;
  faults?: Faults;
}

export interface RunningSimulator {
  /** Its address, the secret included; every path of the API is under it. */
  url: string;
  server: Server;
  /** This simulator's ledger as of its last request; `GET /_sim/charges` reads the shared store first. */
  charges: Charge[];
  injected: InjectedFault[];
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

const usd = (micros: number) => ({ amount: micros / 1e6, currency: 'USD' });

/** Billing differs from the quote a little, as real invoices do. */
function billedFrom(quote: number, id: string): number {
  const wobble = (createHash('sha256').update(id).digest()[0]! / 255) * 0.3;
  return Math.round(quote * (1 + wobble));
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const jobs = new Map<string, Job>();
  const charges: Charge[] = [];
  const injected: InjectedFault[] = [];
  const jobMs = options.jobMs ?? 3_000;
  let faults: Faults = {};
  let random = Math.random;
  const setFaults = (f: Faults) => {
    faults = structuredClone(f);
    random = f.seed === undefined ? Math.random : seededRandom(f.seed);
  };
  setFaults(options.faults ?? {});
  const store = options.stateDir ? new JobStore(options.stateDir) : null;
  const secret = options.stateDir ? folderSecret(options.stateDir) : drawSecret();
  let port = 0;
  const persist = (job: Job) => store?.save({ ...job, cancelled: job.status === 'CANCELLED' });
  const inject = (fault: string, job: Job | null, key: string | null) =>
    injected.push({ at: Date.now(), fault, requestId: job?.id ?? null, idempotencyKey: key });

  const refresh = (job: Job): Job => {
    if (job.status !== 'IN_QUEUE' && job.status !== 'IN_PROGRESS') return job;
    const elapsed = Date.now() - job.createdAt;
    if (elapsed >= job.durationMs && job.fault !== 'never-finish') job.status = job.fault === 'fail' || job.unmakeable ? 'FAILED' : 'COMPLETED';
    else job.status = elapsed >= job.durationMs * 0.1 ? 'IN_PROGRESS' : 'IN_QUEUE';
    return job;
  };
  // A job is charged where it was accepted; one learnt from the store joins the ledger with that same
  // charge, once, so every simulator on the store counts it exactly once.
  const learn = (saved: SavedJob) => {
    const known = jobs.get(saved.id);
    if (!known) {
      jobs.set(saved.id, { ...saved, faultSpent: saved.faultSpent === true, status: saved.cancelled ? 'CANCELLED' : 'IN_QUEUE' });
      charges.push(saved.charge);
      return;
    }
    if (saved.faultSpent) known.faultSpent = true;
    if (saved.cancelled && refresh(known).status !== 'COMPLETED' && known.status !== 'FAILED') known.status = 'CANCELLED';
  };
  const sync = () => store?.readNew().forEach(learn);
  sync();

  const progressOf = (job: Job) => Math.min(job.fault === 'never-finish' ? 0.95 : 1, (Date.now() - job.createdAt) / Math.max(1, job.durationMs));
  // Made as soon as the job is accepted, as a provider would, so a result is ready when it is asked for.
  const mediaOf = (job: Job) => (job.media ??= makeMedia(job.kind, job.input));
  /**
   * The job's media, or null when it cannot be made from the input: the job then fails (a real model fails a request
   * it cannot make, it does not keep answering an error for its result), and the client reads that from its status.
   */
  const madeOrFailed = (job: Job) =>
    mediaOf(job).catch((err: Error) => {
      job.unmakeable = err.message;
      job.status = 'FAILED';
      persist(job);
      return null;
    });

  async function submit(req: IncomingMessage, res: ServerResponse, kind: Kind, model: string): Promise<void> {
    let input: Record<string, unknown>;
    try {
      const parsed = JSON.parse(await readBody(req)) as { input?: unknown };
      if (!parsed.input || typeof parsed.input !== 'object' || Array.isArray(parsed.input)) throw new Error();
      input = parsed.input as Record<string, unknown>;
    } catch {
      return json(res, 422, { detail: 'the body must be JSON with an "input" object' });
    }
    const key = typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : null;
    const fault = nextFault(faults.submit, faults.rates?.submit, random);
    if (fault === 'reject' || fault === 'rate-limit' || fault === 'unavailable') {
      inject(fault, null, key);
      if (fault === 'reject') return json(res, 422, { detail: 'the simulator refused this input (an injected fault)' });
      if (fault === 'rate-limit') return json(res, 429, { detail: 'slow down' }, { 'retry-after': '1' });
      return json(res, 503, { detail: 'the simulator is unavailable; nothing was accepted' });
    }

    const id = randomUUID();
    const quoted = quoteFor(kind, model, input);
    const charge: Charge = {
      requestId: id,
      idempotencyKey: key,
      inputHash: createHash('sha256').update(canonicalJson({ model, input })).digest('hex'),
      kind,
      model,
      quoted,
      billed: billedFrom(quoted, id),
      at: Date.now(),
    };
    const job: Job = {
      id,
      kind,
      model,
      input,
      createdAt: charge.at,
      durationMs: Number(input.duration_ms ?? jobMs),
      charge,
      fault: nextFault(faults.job, faults.rates?.job, random),
      faultSpent: false,
      status: 'IN_QUEUE',
    };
    if (job.fault) inject(job.fault, job, key);
    jobs.set(id, job);
    charges.push(charge);
    persist(job);
    void mediaOf(job).catch((err: Error) => (job.unmakeable = err.message));

    if (fault) inject(fault, job, key);
    const named = { 'x-request-id': id };
    if (fault === 'drop-after-accept') return void res.socket?.destroy();
    if (fault === 'error-after-accept') return json(res, 502, { detail: 'bad gateway after the job was queued' });
    if (fault === 'accepted-5xx') {
      return json(res, random() < 0.5 ? 500 : 504, { detail: 'the job was queued, then the answer failed' }, named);
    }
    if (fault === 'malformed-json') {
      res.writeHead(201, { 'content-type': 'application/json', ...named });
      return void res.end('{"request_id": "' + id.slice(0, 8));
    }
    if (fault === 'slow-body') {
      res.writeHead(201, { 'content-type': 'application/json', ...named });
      res.write('{"request_id":');
      const drip = setInterval(() => res.write(' '), 1_000);
      res.on('close', () => clearInterval(drip));
      return;
    }
    const body = JSON.stringify({ request_id: id, status: job.status, quote: usd(quoted) });
    if (fault === 'cut-body') {
      res.writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...named });
      return void res.write(body.slice(0, body.length >> 1), () => res.socket?.destroy());
    }
    res.writeHead(201, { 'content-type': 'application/json', ...named });
    res.end(body);
  }

  const statusOf = (job: Job) => ({ request_id: job.id, status: job.status, progress: progressOf(job), ...(job.status === 'FAILED' ? { error: job.unmakeable ? `the model could not use its input (${job.unmakeable})` : 'the model failed on this input' } : {}) });

  /** Status events until the job ends: at once, each second, and at the moment it ends. */
  function streamStatus(res: ServerResponse, job: Job): void {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    let timer: NodeJS.Timeout | undefined;
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
    const stop = () => {
      clearTimeout(timer);
      clearInterval(keepAlive);
    };
    res.on('close', stop);
    const send = () => {
      sync();
      refresh(job);
      res.write(`data: ${JSON.stringify(statusOf(job))}\n\n`);
      if (job.status !== 'IN_QUEUE' && job.status !== 'IN_PROGRESS') {
        stop();
        return void res.end();
      }
      const toEnd = job.fault === 'never-finish' ? Infinity : job.createdAt + job.durationMs - Date.now();
      timer = setTimeout(send, Math.max(1, Math.min(1_000, toEnd)));
    };
    send();
  }

  /** The once-only 401 of `result-401-once`, given on the first call for a finished job's result or file. */
  const refusedOnce = (res: ServerResponse, job: Job): boolean => {
    if (job.fault !== 'result-401-once' || job.faultSpent || job.status !== 'COMPLETED') return false;
    job.faultSpent = true;
    persist(job);
    json(res, 401, { detail: 'the key was refused for a moment (an injected fault)' });
    return true;
  };

  /** A path segment as written: a malformed escape ("%E0") names no model, so it is answered 404 like any other. */
  const decoded = (segment: string): string => {
    try {
      return decodeURIComponent(segment);
    } catch {
      return segment;
    }
  };

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (faults.latencyMs) await new Promise((r) => setTimeout(r, faults.latencyMs));
    sync();
    const url = new URL(req.url ?? '/', 'http://simulator');
    const parts = url.pathname.split('/').filter(Boolean);
    // The Host was checked to be this simulator's own loopback address.
    const base = `http://${req.headers.host}/${secret}`;

    if (req.method === 'POST' && parts[0] === 'v1' && parts.length === 4 && parts[3] === 'requests') {
      const kind = parts[1]!;
      if (!isKind(kind) || kind === 'render') return json(res, 404, { detail: `the simulator makes no "${kind}"` });
      const model = decoded(parts[2]!);
      if (SIMULATOR_MODELS[kind] !== model) return json(res, 404, { detail: `the simulator has no ${kind} model "${model}"; its ${kind} model is "${SIMULATOR_MODELS[kind]}"` });
      return submit(req, res, kind, model);
    }
    if (req.method === 'GET' && url.pathname === '/v1/requests') {
      const after = Number(url.searchParams.get('created_after') ?? 0);
      const before = Number(url.searchParams.get('created_before') ?? Number.MAX_SAFE_INTEGER);
      const requests = [...jobs.values()]
        .filter((j) => j.createdAt >= after && j.createdAt <= before)
        .map((j) => ({ request_id: j.id, model: j.model, input: j.input, created_at: j.createdAt, status: refresh(j).status }));
      return json(res, 200, { requests });
    }
    if (parts[0] === 'v1' && parts[1] === 'requests' && parts[2]) {
      const job = jobs.get(parts[2]);
      if (!job) return json(res, 404, { detail: 'no such request' });
      refresh(job);
      if (req.method === 'GET' && parts[3] === 'status' && parts[4] === 'stream') {
        const fault = nextFault(faults.status, faults.rates?.status, random);
        if (fault) inject(`status-${fault}`, job, job.charge.idempotencyKey);
        if (fault) return json(res, 500, { detail: 'status is unavailable for a moment' });
        return streamStatus(res, job);
      }
      if (req.method === 'GET' && parts[3] === 'status') {
        const fault = nextFault(faults.status, faults.rates?.status, random);
        if (fault) inject(`status-${fault}`, job, job.charge.idempotencyKey);
        if (fault === 'server-error') return json(res, 500, { detail: 'status is unavailable for a moment' });
        if (fault === 'malformed-json') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":');
        return json(res, 200, statusOf(job));
      }
      if (req.method === 'GET' && parts[3] === 'result') {
        if (job.status !== 'COMPLETED') return json(res, 409, { detail: `the request is ${job.status}` });
        if (refusedOnce(res, job)) return;
        const made = await madeOrFailed(job);
        if (!made) return json(res, 409, { detail: `the request is ${job.status}` });
        return json(res, 200, {
          outputs: [{ url: `${base}/files/${job.id}/0`, content_type: made.contentType }],
          cost: usd(job.charge.billed),
        });
      }
      if (req.method === 'PUT' && parts[3] === 'cancel') {
        if (job.status === 'COMPLETED' || job.status === 'FAILED') return json(res, 400, { status: 'ALREADY_COMPLETED' });
        job.status = 'CANCELLED';
        persist(job);
        return json(res, 200, { status: 'OK' });
      }
    }
    if (req.method === 'GET' && parts[0] === 'files' && parts[1]) {
      const job = jobs.get(parts[1]);
      if (job?.fault === 'expired-result') return json(res, 410, { detail: 'this result has expired and was deleted' });
      if (!job || refresh(job).status !== 'COMPLETED') return json(res, 404, { detail: 'no such file' });
      if (refusedOnce(res, job)) return;
      const media = await madeOrFailed(job);
      if (!media) return json(res, 404, { detail: 'no such file' });
      res.writeHead(200, { 'content-type': media.contentType, 'content-length': media.bytes.length });
      return void res.end(media.bytes);
    }
    if (req.method === 'GET' && url.pathname === '/_sim/charges') return json(res, 200, charges);
    if (req.method === 'GET' && url.pathname === '/_sim/faults-injected') return json(res, 200, injected);
    if (req.method === 'POST' && url.pathname === '/_sim/faults') {
      try {
        setFaults(parseFaults(JSON.parse(await readBody(req))));
      } catch (err) {
        return json(res, 400, { detail: (err as Error).message });
      }
      return json(res, 200, faults);
    }
    json(res, 404, { detail: 'not found' });
  }

  /** The path under the secret, or null for a path without it. */
  const underSecret = (url: string): string | null => {
    const slash = url.indexOf('/', 1);
    const first = slash < 0 ? url.slice(1) : url.slice(1, slash);
    return sameSecret(first, secret) ? (slash < 0 ? '/' : url.slice(slash)) : null;
  };

  const server = createServer((req, res) => {
    const verdict = checkLoopback(req.headers, port);
    if (!verdict.ok) return json(res, verdict.status, { detail: verdict.reason });
    const path = underSecret(req.url ?? '/');
    if (path === null) return json(res, 404, { detail: 'not found: every path is under the address the simulator printed' });
    req.url = path;
    route(req, res).catch((err: Error) => {
      if (!res.headersSent) json(res, 500, { detail: err.message });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/${secret}`,
    server,
    charges,
    injected,
    setFaults,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          store?.close();
          resolve();
        });
      })),
  };
}
