import { timingSafeEqual } from 'node:crypto';

export interface Gate {
  port: number;
  token: string;
}

export type Verdict = { ok: true } | { ok: false; status: number; reason: string };

const allowedHosts = (port: number) => [`127.0.0.1:${port}`, `localhost:${port}`];

function sameToken(given: string | null, token: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Who may use the loopback host: only a page it served itself, on this machine.
 * - Host must name this loopback address, or a DNS-rebound name could reach it from a web page.
 * - Origin, when a browser sends one, must be this host, or another site could drive it (cross-site requests).
 * - Data needs the per-launch token, which only the page opened from the printed address has. In the address
 *   (`?token=`) only for reading (GET: a media element or an event stream cannot send a header); a request that
 *   changes something (POST) must carry it in its Authorization header, as the app's calls do.
 */
export function checkRequest(
  req: { method?: string; headers: Record<string, string | string[] | undefined>; url: string },
  gate: Gate,
  needsToken: boolean,
): Verdict {
  const host = req.headers.host;
  if (typeof host !== 'string' || !allowedHosts(gate.port).includes(host.toLowerCase())) {
    return { ok: false, status: 421, reason: 'this studio only answers on its own loopback address' };
  }
  const origin = req.headers.origin;
  if (origin !== undefined && !allowedHosts(gate.port).map((h) => `http://${h}`).includes(String(origin).toLowerCase())) {
    return { ok: false, status: 403, reason: 'requests from other sites are refused' };
  }
  if (!needsToken) return { ok: true };
  const auth = req.headers.authorization;
  const bearer = typeof auth === 'string' && auth.startsWith('Bearer ') ? auth.slice(7) : null;
  const query = req.method === 'GET' ? new URL(req.url, 'http://studio').searchParams.get('token') : null;
  if (!sameToken(bearer ?? query, gate.token)) return { ok: false, status: 401, reason: 'open the studio from the address it printed: this request has no valid token' };
  return { ok: true };
}
