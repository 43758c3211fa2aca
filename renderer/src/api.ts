import { API_METHODS, type ChangeEvent, type StudioApi } from '../../main/api/contract.ts';

declare global {
  interface Window {
    /** Exposed by the desktop app's preload; absent in a browser. */
    studio?: StudioApi & { onChange(listener: (e: ChangeEvent) => void): () => void; mediaUrl(path: string): string };
  }
}

/** The token the loopback host printed in the address's fragment, kept for this tab only. */
function token(): string {
  const fromHash = new URLSearchParams(location.hash.slice(1)).get('token');
  if (fromHash) {
    sessionStorage.setItem('studio-token', fromHash);
    history.replaceState(null, '', location.pathname);
  }
  return sessionStorage.getItem('studio-token') ?? '';
}

/** The StudioApi over the loopback host: each method is a POST of its arguments. */
function overHttp(): StudioApi {
  const auth = token();
  const api = {} as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const method of API_METHODS) {
    api[method] = async (...args: unknown[]) => {
      let res: Response;
      let body: { result?: unknown; error?: unknown } | null;
      try {
        res = await fetch(`/api/${method}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${auth}` },
          body: JSON.stringify(args),
        });
        body = (await res.json().catch(() => null)) as typeof body;
      } catch {
        throw new Error('the studio did not answer: check that it is still running, then try again');
      }
      if (!res.ok) throw new Error(typeof body?.error === 'string' ? body.error : `the studio answered HTTP ${res.status}; try again`);
      if (!body || typeof body !== 'object') throw new Error(`the studio sent an answer this page cannot read (HTTP ${res.status}); try again`);
      return body.result;
    };
  }
  return api as unknown as StudioApi;
}

export const studio: StudioApi = window.studio ?? overHttp();

/** Calls `listener` whenever the studio's data changes. */
export function onChange(listener: (e: ChangeEvent) => void): () => void {
  if (window.studio) return window.studio.onChange(listener);
  const events = new EventSource(`/api/events?token=${encodeURIComponent(token())}`);
  events.onmessage = (m) => listener(JSON.parse(m.data) as ChangeEvent);
  return () => events.close();
}

/** The URL a media element can load a task's output from. */
export function mediaSrc(outputUrl: string): string {
  return window.studio ? outputUrl : `${outputUrl}?token=${encodeURIComponent(token())}`;
}

export const money = (amount: number | null | undefined, currency = 'USD') =>
  amount === null || amount === undefined ? '–' : `${amount.toFixed(2)} ${currency}`;
