import type { ProviderHttp } from './providerHttp.ts';
import { canonicalJson } from '../domain/tasks/inputHash.ts';
import { TooLargeAnswer, type Candidate, type Listing, type PreparedRequest } from './port.ts';
import { obj } from './shared.ts';

/**
 * Page sizes asked, largest first: fal's listing takes `limit` 1 to 100 (default 50). A page whose inputs carry
 * inline files (an image as a data: URI) can be larger than the studio reads; the same question gets the same
 * answer, so a smaller page is asked instead, from the start, as fal's cursor counts pages of the size asked.
 */
const PAGE_SIZES = [100, 10, 1] as const;

/** Requests read per lookup, at most: past it the listing is returned cut (see Listing), never taken as whole. */
const AT_MOST = 1_000;

const PATH = '/v1/models/requests/by-endpoint';

/**
 * fal's request history (fal.ai/docs/platform-apis/v1/models/requests/by-endpoint.md): "Lists requests for one or
 * more endpoints", filtered by a time range and by status "success, error, user_error", "Sorting: By end time
 * (default) or duration", each with its `ended_at`, `status_code` and `duration`; `expand=payloads` adds
 * `json_input`. Every status it names is an outcome and it sorts by end: a request is listed once it has ended,
 * and one still queued or running is not. `sent_at` is when the request reached fal (before `started_at` in
 * the docs' example). `start` and `end` bound the time range ("End date in ISO8601 format, exclusive ... Defaults
 * to current time"), without saying which of a request's times they filter on, so the caller asks for a window
 * that holds the whole life of the request looked for, from its send to when it is surely listed.
 */
export async function falLookup(api: ProviderHttp, window: { from: number; to: number }, request: PreparedRequest, signal?: AbortSignal): Promise<Listing> {
  const wanted = canonicalJson(request.input);
  const query = (limit: number, cursor: string | null, payloads: boolean) => {
    const q = new URLSearchParams({ endpoint_id: request.model, start: new Date(window.from).toISOString(), end: new Date(window.to).toISOString(), limit: String(limit) });
    if (payloads) q.set('expand', 'payloads');
    if (cursor) q.set('cursor', cursor);
    return `${PATH}?${q}`;
  };
  /** Every page at one size; null when a page was too large and a smaller size is left to try. */
  const listAll = async (limit: number, smallest: boolean): Promise<Listing | null> => {
    const found = new Map<string, Candidate>();
    const cursors = new Set<string>();
    let cursor: string | null = null;
    do {
      // Pages repeat a request that ended while they were read (the listing is by end time), never twice as many.
      if (cursors.size >= 2 * Math.ceil(AT_MOST / limit)) throw unended(`${cursors.size} pages of ${limit} without reaching its end`);
      let page: Record<string, unknown>;
      let tooLarge = false;
      try {
        page = obj((await api.get(query(limit, cursor, true), signal)).json);
      } catch (err) {
        if (!(err instanceof TooLargeAnswer)) throw err;
        if (!smallest) return null;
        // One request alone is over the size read: it is listed without its input, which stays uncompared.
        page = obj((await api.get(query(limit, cursor, false), signal)).json);
        tooLarge = true;
      }
      const items = (page.items as unknown[] | undefined) ?? [];
      for (const item of items) {
        const c = candidate(obj(item), wanted, tooLarge);
        found.set(c.requestId, c);
      }
      cursor = page.has_more && typeof page.next_cursor === 'string' ? page.next_cursor : null;
      if (cursor !== null && items.length === 0) throw unended('a page with no requests said more follow');
      if (cursor !== null && cursors.has(cursor)) throw unended('it gave a cursor it had given before');
      if (cursor !== null) cursors.add(cursor);
    } while (cursor && found.size < AT_MOST);
    const read = [...found.values()];
    // Stopped with pages left: fal documents no sort direction, so the part not read may be any part of the window.
    return cursor ? Object.assign(read, { cut: `fal listed more than the ${AT_MOST} requests of ${request.model} a lookup reads in the window asked` }) : read;
  };
  let found: Listing | null = null;
  for (let i = 0; !found; i++) found = await listAll(PAGE_SIZES[i]!, i === PAGE_SIZES.length - 1);
  return found;
}

/** A listing that does not come to an end: what it showed so far proves nothing either way. */
function unended(why: string): Error {
  return new Error(`fal's listing went on without end (${why}), so the lookup could not be finished`);
}

function candidate(r: Record<string, unknown>, wanted: string, tooLarge: boolean): Candidate {
  const gone = tooLarge
    ? 'its input is too large to read here (over 1 MiB, as an inline file makes it)'
    : r.json_input === undefined
      ? // Payloads are not kept when storage is off for the account or the request (X-Fal-Store-IO: 0).
        'fal kept no copy of its input (payload storage is off for this account)'
      : null;
  return {
    requestId: String(r.request_id),
    createdAt: Date.parse(String(r.sent_at ?? r.started_at)),
    status: r.status_code ? `HTTP ${r.status_code}` : 'unknown',
    inputMatches: !gone && canonicalJson(r.json_input) === wanted,
    ...(gone ? { inputGone: gone } : {}),
  };
}
