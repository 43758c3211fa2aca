import { createHmac, randomBytes } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { API_METHODS, type ChangeEvent, type StudioApi } from '../api/contract.ts';
import { ApiConflict, ApiError } from '../api/studioService.ts';
import { MAX_JSON_BYTES, parseJsonInput } from '../input/json.ts';
import type { Located } from '../engine/outputLocator.ts';
import type { ChangeProbe } from '../store/port.ts';
import { mediaType, rangeAnswer } from './range.ts';
import { SUBTITLES_PATH, subtitlesBeside } from '../media/filmFiles.ts';
import { checkRequest, type Gate } from './security.ts';
import { ownPictureRoutes, type OwnPictures } from './uploads.ts';

export const RENDERER_DIR = fileURLToPath(new URL('../../dist/renderer/', import.meta.url));

const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "media-src 'self'",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

const STATIC_TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml', '.png': 'image/png' };

export interface HostOptions {
  port?: number;
  /** A probe of the store's changes, pushed to the page; the host closes it when it closes. */
  changes: () => ChangeProbe;
  /**
   * One output file of a task as this machine finds it, for /media/ID (its first) and /media/ID/INDEX (a result may
   * have several); null when the task has no such file kept.
   */
  output: (taskId: number, index: number) => Promise<Located | null>;
  log?: (message: string) => void;
  rendererDir?: string;
  /** The token to ask for; kept across restarts on one data folder (identity.ts), so an open tab stays valid. */
  token?: string;
  /** A creator's own pictures, sent from the app and shown in it (uploads.ts). */
  own?: OwnPictures;
}

export interface RunningHost {
  url: string;
  /** The address to open: the page reads its token from the fragment, which never reaches a server log. */
  openUrl: string;
  token: string;
  port: number;
  /**
   * A one-use address that leads to `openUrl`, for handing to a browser on its command line: other users of
   * the machine can read a process's arguments, and the token must not be among them. It is spent on first
   * use and lapses after two minutes.
   */
  openOnce(): string;
  server: Server;
  close(): Promise<void>;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_JSON_BYTES) throw new ApiError(`the request is larger than ${MAX_JSON_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  try {
    return parseJsonInput(Buffer.concat(chunks).toString('utf8') || '[]', 'the request body');
  } catch (err) {
    throw new ApiError((err as Error).message);
  }
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', ...headers });
  res.end(JSON.stringify(body));
}

/**
 * Watches the store for commits from any connection (the engine's, another process's, another machine's) and
 * counts them. Nothing thrown by a tick (a locked, failing or unreachable database, a listener's fault) leaves
 * the timer: it is logged, and the next tick tries again, so the change is still delivered once the fault clears.
 */
export function watchChanges(
  probe: ChangeProbe,
  onChange: (e: ChangeEvent) => void,
  log: (message: string) => void = (m) => process.stderr.write(`studio: ${m}\n`),
): () => void {
  let last: string | null = null;
  let version = 0;
  let reading = false;
  // Twice a second at most: progress writes come often, and each change makes the page fetch again.
  const timer = setInterval(() => {
    // A read of a team database may take longer than the interval; the next one waits for it.
    if (reading) return;
    reading = true;
    void probe
      .read()
      .then(
        ({ mark, needsDecision }) => {
          if (mark === last) return;
          // Only after the whole read: a failed one leaves the change to be seen on the next tick.
          last = mark;
          try {
            onChange({ version: ++version, needsDecision });
          } catch (err) {
            log(`a change could not be passed on: ${(err as Error).stack ?? String(err)}`);
          }
        },
        (err: unknown) => log(`changes could not be read from the database; trying again: ${(err as Error).message}`),
      )
      .finally(() => (reading = false));
  }, 500);
  return () => {
    clearInterval(timer);
    void probe.close();
  };
}

/** The size of a regular file that can be read, or null (gone, a folder, unreadable). */
function fileSize(path: string): number | null {
  try {
    const stats = statSync(path);
    return stats.isFile() ? stats.size : null;
  } catch {
    return null;
  }
}

/**
 * Streams a file into an answer. A file that breaks while it is read (deleted, replaced, unreadable) ends
 * the answer, 500 if nothing was sent yet, and is logged: it never takes the host down.
 */
function streamFile(
  res: ServerResponse,
  path: string,
  headers: Record<string, string | number>,
  status: number,
  range: { start: number; end: number } | undefined,
  log?: (m: string) => void,
): void {
  const stream = createReadStream(path, range ?? {});
  stream.once('error', (err) => {
    log?.(`${path} could not be read: ${err.message}`);
    if (!res.headersSent) send(res, 500, { error: 'the file could not be read' });
    else res.destroy();
  });
  stream.once('open', () => {
    res.writeHead(status, headers);
    // pipeline, not pipe: a client that goes away mid-file (a seek in a video) closes the file too.
    pipeline(stream, res, () => undefined);
  });
}

/**
 * The host's answer to a tab's nonce: HMAC-SHA256 keyed by the token over the nonce and the port. The port is
 * in it so a program squatting on the tab's old port cannot pass off the answer of the real host on another.
 */
export const hostProof = (token: string, nonce: string, port: number) => createHmac('sha256', token).update(`${nonce}:${port}`).digest('hex');

/**
 * The loopback host: the StudioApi over HTTP on 127.0.0.1, changes pushed as server-sent events, task
 * outputs with Range support, and the built renderer. See security.ts for who may use it.
 */
export async function startHost(api: StudioApi, options: HostOptions): Promise<RunningHost> {
  const token = options.token ?? randomBytes(24).toString('hex');
  const openCodes = new Map<string, number>();
  const gate: Gate = { port: 0, token };
  const rendererDir = options.rendererDir ?? RENDERER_DIR;
  const listeners = new Set<ServerResponse>();
  let latest: ChangeEvent = { version: 0, needsDecision: 0 };
  const stopWatching = watchChanges(options.changes(), (e) => {
    latest = e;
    for (const res of listeners) res.write(`data: ${JSON.stringify(e)}\n\n`);
  }, options.log);

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://studio');
    const isData = url.pathname.startsWith('/api/') || url.pathname.startsWith('/media/') || url.pathname.startsWith('/upload/');
    const verdict = checkRequest({ method: req.method, headers: req.headers, url: req.url ?? '/' }, gate, isData);
    if (!verdict.ok) return send(res, verdict.status, { error: verdict.reason });
    if (options.own && (await ownPictureRoutes(req, res, url, options.own, send, options.log))) return;

    if (req.method === 'POST' && url.pathname.startsWith('/api/')) {
      const method = url.pathname.slice('/api/'.length) as (typeof API_METHODS)[number];
      if (!API_METHODS.includes(method)) return send(res, 404, { error: `there is no method ${method}` });
      try {
        const args = await readJson(req);
        if (!Array.isArray(args)) throw new ApiError('the body must be a JSON list of arguments');
        const result = await (api[method] as (...a: unknown[]) => Promise<unknown>)(...args);
        return send(res, 200, { result: result ?? null });
      } catch (err) {
        if (err instanceof ApiConflict) return send(res, 409, { error: err.message, conflict: true });
        if (err instanceof ApiError) return send(res, 400, { error: err.message });
        options.log?.(`${method}: ${(err as Error).stack}`);
        return send(res, 500, { error: 'the studio hit an internal error; it was logged' });
      }
    }
    if (req.method === 'GET' && url.pathname === '/api/events') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
      res.write(`data: ${JSON.stringify(latest)}\n\n`);
      listeners.add(res);
      const ping = setInterval(() => res.write(': ping\n\n'), 15_000);
      req.on('close', () => {
        clearInterval(ping);
        listeners.delete(res);
      });
      return;
    }
    // A tab left open asks this before it sends its token again: whatever listens on the port now may be
    // another program. Only a host with that token, on that port, can answer (hostProof).
    if (req.method === 'GET' && url.pathname === '/hello') {
      const nonce = url.searchParams.get('nonce') ?? '';
      if (!/^[0-9a-f]{32}$/.test(nonce)) return send(res, 400, { error: 'the nonce is 32 hex digits' });
      return send(res, 200, { proof: hostProof(token, nonce, gate.port) });
    }
    if (req.method === 'GET' && url.pathname.startsWith('/open/')) {
      const code = url.pathname.slice('/open/'.length);
      const until = openCodes.get(code);
      openCodes.delete(code);
      if (until === undefined || until < Date.now()) return send(res, 410, { error: 'this opening address was used already; open the address the studio printed' });
      res.writeHead(302, { location: `/#token=${token}`, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
      return void res.end();
    }
    if (req.method === 'GET' && url.pathname.startsWith('/media/')) {
      const [id, index = '0', ...rest] = url.pathname.slice('/media/'.length).split('/');
      // A film's subtitles are asked for after its address, and read from beside its file.
      const subtitles = index === SUBTITLES_PATH;
      const found = rest.length === 0 && /^\d+$/.test(id!) && (subtitles || /^\d+$/.test(index)) ? await options.output(Number(id), subtitles ? 0 : Number(index)) : null;
      if (!found) return send(res, 404, { error: 'no such result' });
      // Saved, but not readable here: which machine has it, or that it is not the file that was saved.
      if (found.state !== 'here') return send(res, found.state === 'missing' ? 404 : 409, { error: found.words });
      const path = subtitles ? subtitlesBeside(found.path).vtt : found.path;
      const size = fileSize(path);
      if (size === null) return send(res, 404, { error: 'no such result' });
      const answer = rangeAnswer(req.headers.range, size, mediaType(path));
      if (answer.status === 416) {
        res.writeHead(answer.status, answer.headers);
        return void res.end();
      }
      return streamFile(res, path, { ...answer.headers, 'cache-control': 'private, max-age=3600' }, answer.status, answer.range ?? undefined, options.log);
    }
    if (req.method === 'GET') {
      const file = normalize(join(rendererDir, url.pathname === '/' ? 'index.html' : url.pathname));
      const target = file.startsWith(rendererDir) && fileSize(file) !== null ? file : join(rendererDir, 'index.html');
      if (fileSize(target) === null) return send(res, 503, { error: 'the UI is not built; run "npm run build"' });
      const headers = {
        'content-type': STATIC_TYPES[extname(target)] ?? 'application/octet-stream',
        'content-security-policy': CSP,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
      };
      return streamFile(res, target, headers, 200, undefined, options.log);
    }
    send(res, 405, { error: 'method not allowed' });
  }

  const server = createServer((req, res) => {
    res.on('error', (err) => options.log?.(`answer to ${req.url} broke off: ${err.message}`));
    route(req, res).catch((err: Error) => {
      options.log?.(err.stack ?? err.message);
      if (!res.headersSent) send(res, 500, { error: 'the studio hit an internal error; it was logged' });
    });
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', resolve);
    });
  } catch (err) {
    // Nothing may stay behind to hold the process open when the port is refused.
    stopWatching();
    throw err;
  }
  gate.port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${gate.port}`;
  return {
    url,
    openUrl: `${url}/#token=${token}`,
    token,
    port: gate.port,
    openOnce: () => {
      const code = randomBytes(16).toString('hex');
      openCodes.set(code, Date.now() + 120_000);
      return `${url}/open/${code}`;
    },
    server,
    close: () =>
      new Promise<void>((resolve) => {
        stopWatching();
        for (const res of listeners) res.end();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
