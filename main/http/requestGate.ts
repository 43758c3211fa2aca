import { timingSafeEqual } from 'node:crypto';

export type Verdict = { ok: true } | { ok: false; status: number; reason: string };

type Headers = Record<string, string | string[] | undefined>;

const loopbackHosts = (port: number) => [`127.0.0.1:${port}`, `localhost:${port}`];

/**
 * What every server of the studio on loopback (the host, the simulator) refuses before anything else, whatever
 * the path: a request a web page in a browser on this machine could make.
 * - Host must name this loopback address and port, or a DNS-rebound name (a page's own name made to point at
 *   127.0.0.1) could reach it from that page.
 * - Origin, when a browser sends one, must be this very address, or another site could drive it (cross-site requests).
 */
export function checkLoopback(headers: Headers, port: number): Verdict {
  const host = headers.host;
  if (typeof host !== 'string' || !loopbackHosts(port).includes(host.toLowerCase())) {
    return { ok: false, status: 421, reason: 'this server only answers on its own loopback address' };
  }
  const origin = headers.origin;
  if (origin !== undefined && !loopbackHosts(port).map((h) => `http://${h}`).includes(String(origin).toLowerCase())) {
    return { ok: false, status: 403, reason: 'requests from other sites are refused' };
  }
  return { ok: true };
}

/** Whether `given` is the secret, compared in constant time so the answer's timing tells nothing of it. */
export function sameSecret(given: string | null | undefined, secret: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(secret);
  return a.length === b.length && timingSafeEqual(a, b);
}
