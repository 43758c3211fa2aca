import { checkLoopback, sameSecret, type Verdict } from '../http/requestGate.ts';

export interface Gate {
  port: number;
  token: string;
}

/**
 * Who may use the loopback host: only a page it served itself, on this machine.
 * - Host and Origin as every loopback server of the studio checks them (main/http/requestGate.ts): this address
 *   only, so neither a DNS-rebound name nor another site reaches it.
 * - Data needs the per-launch token, which only the page opened from the printed address has. In the address
 *   (`?token=`) only for reading (GET: a media element or an event stream cannot send a header); a request that
 *   changes something (POST) must carry it in its Authorization header, as the app's calls do.
 */
export function checkRequest(
  req: { method?: string; headers: Record<string, string | string[] | undefined>; url: string },
  gate: Gate,
  needsToken: boolean,
): Verdict {
  const loopback = checkLoopback(req.headers, gate.port);
  if (!loopback.ok || !needsToken) return loopback;
  const auth = req.headers.authorization;
  const bearer = typeof auth === 'string' && auth.startsWith('Bearer ') ? auth.slice(7) : null;
  const query = req.method === 'GET' ? new URL(req.url, 'http://studio').searchParams.get('token') : null;
  if (!sameSecret(bearer ?? query, gate.token)) return { ok: false, status: 401, reason: 'open the studio from the address it printed: this request has no valid token' };
  return { ok: true };
}
