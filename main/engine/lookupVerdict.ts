import type { Candidate } from '../providers/port.ts';
import type { ListedBy } from './listedBy.ts';

/** Clocks differ between this machine and the provider; a request is looked for a little either side of the send window. */
export const SKEW_MS = 2 * 60_000;

/** What one lookup at the provider found for a task whose outcome is unknown, with what the studio knows about it. */
export interface LookupFacts {
  /** From the start of the send to the moment the task was parked as unknown: the request, if made, was made then. */
  window: { from: number; to: number };
  /** Requests of the same endpoint or model found at the provider; `taken`: it already belongs to another task. */
  found: (Candidate & { taken: boolean })[];
  /** Request ids saved on this task or reported by one of its workers. */
  known: string[];
  /** Other tasks that sent this same input in a window overlapping this one's. */
  sameInputOverlapping: number[];
  /**
   * When earlier attempts of this task that may have been accepted (parked as unknown, then resubmitted) ended,
   * where that is inside this one's window with its margin: their request has this same input.
   */
  earlierAttempts?: number[];
  /** This lookup's number (from 1), and how many are made at least before the person is asked. */
  tries: number;
  maxTries: number;
  /**
   * For a provider whose listing shows a request only once it has ended (fal's): when one sent in this window
   * is surely listed. Until then a listing with nothing in it proves nothing, so nobody is told "never accepted".
   */
  listed?: ListedBy | null;
  /** Set when the listing had more than a lookup reads (see Listing): an absence from it proves nothing. */
  cut?: string | null;
  /** When the listing was asked for (read before the request left). */
  now?: number;
  /**
   * False when `now` came from a clock stepped (or asleep) since it was last measured: it may read far ahead, so
   * an empty listing then proves nothing and nobody is told "never accepted" until the clock is measured again.
   */
  clockSettled?: boolean;
}

export type LookupVerdict =
  /** Exactly the request that was sent: the studio adopts it and says so. */
  | { action: 'adopt'; requestId: string; why: string }
  /** Nothing yet: a queued request may be listed only once it ends, so look again later. */
  | { action: 'again'; why: string }
  /** Anything less than certain: the person decides. */
  | { action: 'ask'; why: string };

const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;
const ids = (c: Candidate) => [c.requestId, ...(c.aliases ?? [])];

/**
 * Whether a lookup found exactly the request the studio sent: the same endpoint or model (the adapter lists
 * only those), an identical input, made inside the task's send window, belonging to no other task, with no
 * other task having sent that input in an overlapping window, and nothing else in the window that could be it.
 */
export function lookupVerdict(f: LookupFacts): LookupVerdict {
  const inWindow = (c: Candidate) => c.createdAt >= f.window.from - SKEW_MS && c.createdAt <= f.window.to + SKEW_MS;
  const listed = f.found.filter(inWindow);
  const same = listed.filter((c) => c.inputMatches && !c.taken);
  const uncompared = listed.filter((c) => !c.inputMatches && c.inputGone && !c.taken);

  if (f.sameInputOverlapping.length > 0) {
    return {
      action: 'ask',
      why: `task ${f.sameInputOverlapping.join(', ')} sent the same input while this one was being sent, so which request is whose cannot be told`,
    };
  }
  if (same.length > 1) return { action: 'ask', why: `${same.length} requests with this input were made while it was being sent` };
  const earlier = f.earlierAttempts ?? [];
  if (same.length > 0 && earlier.length > 0) {
    return {
      action: 'ask',
      why:
        `an earlier attempt of this task, which may also have been accepted, ended ${seconds(f.window.from - Math.max(...earlier))} before this one was sent, ` +
        `so whether request ${same[0]!.requestId} is this attempt's or that one's cannot be told`,
    };
  }
  if (uncompared.length > 0) {
    return {
      action: 'ask',
      why: `${uncompared.length} request(s) of this model made while it was being sent could not be compared: ${uncompared[0]!.inputGone}`,
    };
  }
  const [match] = same;
  // Cut short, another request with this input may be in the part not read, unless this one's id was heard for the task.
  if (match && f.cut && !ids(match).some((id) => f.known.includes(id))) {
    return { action: 'ask', why: `request ${match.requestId} has this input, but ${f.cut}, so whether another one has it too cannot be told` };
  }
  if (match) {
    if (f.known.length > 0 && !ids(match).some((id) => f.known.includes(id))) {
      return { action: 'ask', why: `the request found (${match.requestId}) is not the one whose id was saved on the task (${f.known.join(', ')})` };
    }
    return {
      action: 'adopt',
      requestId: match.requestId,
      why: `the only request with this exact input, made ${seconds(match.createdAt - f.window.from)} after the send started and belonging to no other task`,
    };
  }
  if (f.listed && (f.now ?? 0) < f.listed.at) return { action: 'again', why: `not listed yet: ${f.listed.why} (lookup ${f.tries})` };
  if (f.clockSettled === false) {
    return { action: 'again', why: `nothing with this input is listed yet, and this computer's clock was just set or woke from sleep, so it is looked for again once the clock is measured (lookup ${f.tries})` };
  }
  if (f.cut) {
    // Not "never accepted": the request may be in the part of the listing not read.
    const why = `the listing could not be looked through whole: ${f.cut}`;
    if (f.tries < f.maxTries) return { action: 'again', why: `${why} (lookup ${f.tries} of ${f.maxTries})` };
    return { action: 'ask', why: `${why}; whether it was accepted cannot be told from it (after ${f.tries} lookups)` };
  }
  if (f.tries < f.maxTries) return { action: 'again', why: `nothing with this input is listed yet (lookup ${f.tries} of ${f.maxTries})` };
  return { action: 'ask', why: `no request with this input was listed after ${f.tries} lookups: it was most likely never accepted` };
}

/**
 * What a lookup whose listing call failed (an error, a 5xx) leads to. Past the tries, the person is asked, unless
 * the request could still be queued or running until `listedBy` (worked out without the listing) and that time
 * has not come: a request the provider may still run and charge is never handed to a person, who could send it again.
 */
export function failedLookupVerdict(tries: number, maxTries: number, listedBy: number | null, now: number): 'again' | 'ask' {
  if (tries < maxTries) return 'again';
  return listedBy !== null && now < listedBy ? 'again' : 'ask';
}
