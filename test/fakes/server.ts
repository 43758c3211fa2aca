import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';

export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type Route = (req: SeenRequest, res: ServerResponse) => void | Promise<void>;

export interface FakeServer {
  url: string;
  seen: SeenRequest[];
  /** Requests whose method and path match, e.g. count('POST', /predictions/). */
  count(method: string, path: RegExp): number;
}

const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((close) => close()));
});

export function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': typeof body === 'string' || Buffer.isBuffer(body) ? 'application/octet-stream' : 'application/json', ...headers });
  res.end(text);
}

/**
 * Sends the status and headers and part of a longer body, then cuts the connection: the answer a client
 * gets when a link drops after the provider has done the work.
 */
export async function cutAfterHeaders(res: ServerResponse, status: number, headers: Record<string, string>, part = 'partial'): Promise<void> {
  res.writeHead(status, { ...headers, 'content-length': String(part.length + 10_000) });
  await new Promise<void>((r) => res.write(part, () => r()));
  await new Promise((r) => setTimeout(r, 20));
  res.socket?.destroy();
}

/**
 * Answers `status` to the first request for each path that `paths` matches, then hands every request
 * to `next`: a passing failure (a key being changed, a record not visible yet) that a later ask gets past.
 */
export function failingOnce(paths: RegExp, status: number, next: Route, headers: Record<string, string> = {}): Route {
  const failed = new Set<string>();
  return (req, res) => {
    if (paths.test(req.path) && !failed.has(req.path)) {
      failed.add(req.path);
      return send(res, status, { detail: `HTTP ${status} for now` }, headers);
    }
    return next(req, res);
  };
}

/**
 * A real HTTP server on 127.0.0.1 standing in for a provider, speaking its documented format. It records
 * every request, so a test can count the paid POSTs it received.
 */
export async function startFake(route: Route): Promise<FakeServer> {
  const seen: SeenRequest[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const request = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
    seen.push(request);
    try {
      await route(request, res);
    } catch (err) {
      send(res, 500, { detail: (err as Error).message });
    }
    if (!res.headersSent && !res.destroyed) send(res, 404, { detail: `no route for ${req.method} ${req.url}` });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  open.push(
    () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, count: (method, path) => seen.filter((s) => s.method === method && path.test(s.path)).length };
}
