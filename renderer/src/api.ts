import { amountWords, API_METHODS, type ChangeEvent, type StudioApi } from '../../main/api/contract.ts';

declare global {
  interface Window {
    /** Exposed by the desktop app's preload; absent in a browser. */
    studio?: StudioApi & {
      onChange(listener: (e: ChangeEvent) => void): () => void;
      mediaUrl(path: string): string;
      /** "Save as…" for a task's output: the name it was saved under, or null when the person cancelled. */
      saveOutputAs(taskId: number): Promise<string | null>;
      showOutputInFolder(taskId: number): Promise<void>;
      /** A picture file dropped or picked for a scene, checked and copied into the project by its path (app/ownPicture.ts). */
      useOwnPicture(project: string, scene: string, file: File): Promise<SentPicture>;
      /** A music file picked for the storyboard's music bed, checked and copied into the project by its path (app/ownPicture.ts). */
      useOwnMusic(project: string, file: File): Promise<SentMusic>;
    };
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

const NO_ANSWER = 'the studio did not answer: check that it is still running, then try again';

/** The StudioApi over the loopback host: each method is a POST of its arguments. */
function overHttp(): StudioApi {
  const auth = token();
  const api = {} as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const method of API_METHODS) {
    api[method] = async (...args: unknown[]) => {
      // While the tab has not found its studio again, whatever holds the port gets no token.
      if (link === 'down') throw new Error(NO_ANSWER);
      if (link === 'refused') throw new Error('what answers at this address now is not the studio this page was opened from: open the address the studio printed');
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
        throw new Error(NO_ANSWER);
      }
      if (!res.ok) throw new Error(typeof body?.error === 'string' ? body.error : `the studio answered HTTP ${res.status}; try again`);
      if (!body || typeof body !== 'object') throw new Error(`the studio sent an answer this page cannot read (HTTP ${res.status}); try again`);
      return body.result;
    };
  }
  return api as unknown as StudioApi;
}

export const studio: StudioApi = window.studio ?? overHttp();

/** This tab's link to the loopback host: 'down' while the host is stopped, 'refused' when it will not take this tab's token. */
export type HostLink = 'connecting' | 'up' | 'down' | 'refused';
let link: HostLink = 'connecting';
const linkListeners = new Set<(l: HostLink) => void>();
function setLink(next: HostLink): void {
  if (next === link) return;
  link = next;
  for (const l of linkListeners) l(next);
}

/** Calls `listener` with the link now and at each change; the desktop app's link is always up. */
export function onHostLink(listener: (l: HostLink) => void): () => void {
  linkListeners.add(listener);
  listener(window.studio ? 'up' : link);
  return () => void linkListeners.delete(listener);
}

/**
 * Calls `listener` whenever the studio's data changes; `restarted` marks the first state heard after the link
 * to the host broke and came back, a start-up for the page. In a browser the change stream breaks the moment the
 * host stops; the tab then asks every second, and carries on by itself once the studio runs again on the
 * same data folder (same address and token: main/host/identity.ts). Each host counts its versions from 0, so
 * they are passed on added to the last one seen: every view loads again after a restart.
 */
export function onChange(listener: (e: ChangeEvent, restarted: boolean) => void): () => void {
  if (window.studio) return window.studio.onChange((e) => listener(e, false));
  let events: EventSource | null = null;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let ended = false;
  let last = 0;
  let base = 0;
  let again = false;
  const connect = () => {
    const stream = new EventSource(`/api/events?token=${encodeURIComponent(token())}`);
    events = stream;
    let opened = false;
    let first = true;
    stream.onopen = () => {
      opened = true;
      setLink('up');
    };
    stream.onmessage = (m) => {
      const e = JSON.parse(m.data) as ChangeEvent;
      // A host's placeholder before its first look at the database tells a tab that has seen data nothing.
      if (again && e.version === 0) return;
      last = base + e.version;
      listener({ ...e, version: last }, again && first);
      first = false;
    };
    stream.onerror = () => {
      stream.close();
      again = true;
      base = last;
      // A stream that never opened is not asked for again at once, so nothing can spin.
      if (opened) void probe();
      else retry = setTimeout(() => void probe(), 1_000);
    };
  };
  // Asked at once when the stream breaks, so a stopped host is reported within a moment and a hiccup is not.
  const probe = async () => {
    if (ended) return;
    const known = await hostKnowsToken();
    if (ended) return;
    if (known) return connect();
    setLink(known === null ? 'down' : 'refused');
    retry = setTimeout(() => void probe(), 1_000);
  };
  connect();
  return () => {
    ended = true;
    clearTimeout(retry);
    events?.close();
  };
}

const hex = (bytes: Uint8Array) => [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');

/**
 * Whether what listens on this tab's port now is a studio host with this tab's token, asked without sending the
 * token (main/host/server.ts hostProof): after a stop another program may hold the port. null: nothing answers.
 */
async function hostKnowsToken(): Promise<boolean | null> {
  const nonce = hex(crypto.getRandomValues(new Uint8Array(16)));
  let proof: unknown;
  try {
    const res = await fetch(`/hello?nonce=${nonce}`, { cache: 'no-store' });
    proof = res.ok ? ((await res.json().catch(() => null)) as { proof?: unknown } | null)?.proof : undefined;
  } catch {
    return null;
  }
  const encode = (text: string) => new TextEncoder().encode(text);
  const key = await crypto.subtle.importKey('raw', encode(token()), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return proof === hex(new Uint8Array(await crypto.subtle.sign('HMAC', key, encode(`${nonce}:${location.port}`))));
}

/** The URL a media element can load a task's output from. */
export function mediaSrc(outputUrl: string): string {
  return window.studio ? outputUrl : `${outputUrl}?token=${encodeURIComponent(token())}`;
}

export const money = (amount: number | null | undefined, currency = 'USD') =>
  amount === null || amount === undefined ? '–' : amountWords(amount, currency);

/** A picture or clip the creator sent for a scene, checked and copied into the project: what the scene's `image` or `clip` becomes. */
export interface SentPicture {
  image?: { file: string; sha256: string; name: string };
  clip?: { file: string; sha256: string; name: string };
  name: string;
}

/** How long a picture may take to be received, checked and copied before the app says the studio did not answer. */
const UPLOAD_WAIT_MS = 120_000;
const uploadUnanswered = (what: string) => `the studio did not answer within 2 minutes; check that it is still running and that its disk has space, then send the ${what} again`;

/**
 * Takes a picture from this computer for a scene: the desktop app hands the file to its own bridge, which copies it
 * by its path; a browser sends it through the loopback host (main/host/uploads.ts). Either checks it and copies it
 * into the project; the storyboard is then saved with the scene's image set to it.
 */
export async function sendPicture(project: string, scene: string, file: File): Promise<SentPicture> {
  if (window.studio) return window.studio.useOwnPicture(project, scene, file);
  return upload<SentPicture>('picture', new URLSearchParams({ project, scene, name: file.name }), file);
}

/** A music file the creator sent for the storyboard's music bed, checked and copied into the project: what its `music` becomes. */
export interface SentMusic {
  music: { file: string; sha256: string; name: string };
  name: string;
}

/** Takes a music file from this computer for the music bed, as `sendPicture` takes a picture (main/host/uploads.ts). */
export async function sendMusic(project: string, file: File): Promise<SentMusic> {
  if (window.studio) return window.studio.useOwnMusic(project, file);
  return upload<SentMusic>('music', new URLSearchParams({ project, name: file.name }), file);
}

async function upload<T>(what: 'picture' | 'music', query: URLSearchParams, file: File): Promise<T> {
  // A studio that never answers (stopped, or stuck) must not leave the scene "Sending…" for good.
  const signal = AbortSignal.timeout(UPLOAD_WAIT_MS);
  let res: Response;
  try {
    res = await fetch(`/upload/${what}?${query}`, { method: 'POST', headers: { authorization: `Bearer ${token()}` }, body: file, signal });
  } catch {
    throw new Error(signal.aborted ? uploadUnanswered(what) : NO_ANSWER);
  }
  const body = (await res.json().catch(() => null)) as { result?: T; error?: string } | null;
  if (!res.ok || !body?.result) throw new Error(body?.error ?? `the studio answered HTTP ${res.status}; try again`);
  return body.result;
}

/** Where the app shows a task's result by its id: the desktop's studio-media: protocol, or the loopback host's /media/. */
export const taskMediaSrc = (id: number) => (window.studio ? `studio-media://task/${id}` : mediaSrc(`/media/${id}`));

/** Where the app shows a project's own still (main/host/uploads.ts). */
export const ownPictureSrc = (project: string, sha256: string) =>
  window.studio ? `studio-media://own/${encodeURIComponent(project)}/${sha256}` : mediaSrc(`/media/own/${encodeURIComponent(project)}/${sha256}`);
