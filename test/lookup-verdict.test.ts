import { describe, expect, it } from 'vitest';
import { learnDurations } from '../main/engine/durations.ts';
import { listedBy, longestRun, queuedBehind, UNKNOWN_RUN_MS } from '../main/engine/listedBy.ts';
import { failedLookupVerdict, lookupVerdict, SKEW_MS, type LookupFacts } from '../main/engine/lookupVerdict.ts';

const T0 = Date.parse('2026-03-01T12:00:00Z');
const window = { from: T0, to: T0 + 5_000 };
const found = (id: string, at: number, more: Partial<LookupFacts['found'][number]> = {}) => ({ requestId: id, createdAt: at, status: 'HTTP 200', inputMatches: true, taken: false, ...more });
const facts = (more: Partial<LookupFacts>): LookupFacts => ({ window, found: [], known: [], sameInputOverlapping: [], tries: 1, maxTries: 5, ...more });

describe('lookupVerdict: the studio adopts only exactly the request it sent', () => {
  it.each<[string, Partial<LookupFacts>, 'adopt' | 'again' | 'ask', RegExp]>([
    ['one request, same input, inside the send window', { found: [found('r1', T0 + 1_000)] }, 'adopt', /only request with this exact input, made 1 s after/],
    ['one inside, others with other inputs', { found: [found('r1', T0 + 1_000), found('r2', T0 + 2_000, { inputMatches: false })] }, 'adopt', /only request/],
    ['made a little before the send, within the clock skew', { found: [found('r1', T0 - SKEW_MS + 1)] }, 'adopt', /only request/],
    ['the same input, but made long after the task was parked', { found: [found('r1', window.to + SKEW_MS + 1)] }, 'again', /lookup 1 of 5/],
    ['the only match already belongs to another task', { found: [found('r1', T0 + 1_000, { taken: true })] }, 'again', /nothing with this input is listed yet/],
    ['two requests with this input in the window', { found: [found('r1', T0 + 1_000), found('r2', T0 + 2_000)] }, 'ask', /2 requests with this input/],
    ['another task sent the same input at the same time', { found: [found('r1', T0 + 1_000)], sameInputOverlapping: [7] }, 'ask', /task 7 sent the same input/],
    [
      'a request of this model whose input the provider removed',
      { found: [found('r1', T0 + 1_000), found('r2', T0 + 2_000, { inputMatches: false, inputGone: 'removed after an hour' })] },
      'ask',
      /could not be compared: removed after an hour/,
    ],
    ['only a request whose input was removed', { found: [found('r2', T0 + 2_000, { inputMatches: false, inputGone: 'removed after an hour' })] }, 'ask', /could not be compared/],
    ['the id saved on the task is the one found', { found: [found('r1', T0 + 1_000, { aliases: ['h1'] })], known: ['h1'] }, 'adopt', /only request/],
    ['the id saved on the task is another one', { found: [found('r1', T0 + 1_000)], known: ['r9'] }, 'ask', /not the one whose id was saved/],
    ['nothing listed yet', { found: [] }, 'again', /nothing with this input is listed yet \(lookup 1 of 5\)/],
    ['nothing listed after the last try', { found: [], tries: 5 }, 'ask', /after 5 lookups: it was most likely never accepted/],
    ['nothing listed after the last try, on a clock stepped since it was measured', { found: [], tries: 5, clockSettled: false }, 'again', /clock was just set or woke from sleep/],
  ])('%s: %s', (_name, more, action, why) => {
    const verdict = lookupVerdict(facts(more));
    expect(verdict.action).toBe(action);
    expect(verdict.why).toMatch(why);
    if (verdict.action === 'adopt') expect(verdict.requestId).toBe('r1');
  });
});

describe('lookupVerdict: "never accepted" only once the listing could show the request', () => {
  // fal lists a request once it has ended: until its longest run and queue time have passed, absence proves nothing.
  const listed = { at: T0 + 20 * 60_000, why: 'fal lists a request once it has ended, and one sent then could still be queued or running until then' };
  it.each<[string, Partial<LookupFacts>, 'again' | 'ask', RegExp]>([
    ['the tries ran out while it could still be running', { tries: 5, listed, now: listed.at - 1 }, 'again', /^not listed yet: fal lists a request once it has ended.* \(lookup 5\)$/],
    ['past the tries, long after', { tries: 40, listed, now: listed.at - 1 }, 'again', /^not listed yet/],
    ['the listing would show it by now, and the tries ran out', { tries: 41, listed, now: listed.at }, 'ask', /after 41 lookups: it was most likely never accepted/],
    ['the listing would show it by now, tries remain', { tries: 2, listed, now: listed.at + 1 }, 'again', /lookup 2 of 5/],
  ])('%s', (_name, more, action, why) => {
    const verdict = lookupVerdict(facts(more));
    expect(verdict.action).toBe(action);
    expect(verdict.why).toMatch(why);
  });
});

describe('listedBy: when a request that fal lists once ended surely shows', () => {
  const QUEUE = 10 * 60_000;
  const MIN = 60_000;
  const alone = { runs: 1, ahead: [], now: T0 };
  it('counts twice the stated run, or the slowest run learned here when longer, then the queue allowance', () => {
    expect(listedBy('fal', T0, longestRun('fal', 5 * MIN, null), QUEUE, alone)).toEqual({
      at: T0 + 20 * MIN,
      why: `fal lists a request once it has ended, and one sent then could still be queued or running until ${new Date(T0 + 20 * MIN).toISOString()} (twice fal's stated run of about 5 min, plus 10 min in the queue)`,
    });
    const slow = learnDurations([60_000, 120_000, 15 * MIN]);
    expect(listedBy('fal', T0, longestRun('fal', 5 * MIN, slow), QUEUE, alone)).toMatchObject({ at: T0 + 25 * MIN, why: expect.stringContaining('(the slowest of 3 runs of this model here, 15 min, plus 10 min in the queue)') });
    expect(listedBy('fal', T0, longestRun('fal', undefined, learnDurations([2_000, 2_500, 3_000])), QUEUE, alone).at).toBe(T0 + 3_000 + QUEUE);
    expect(listedBy('fal', T0, longestRun('fal', undefined, null), QUEUE, alone)).toMatchObject({ at: T0 + UNKNOWN_RUN_MS + QUEUE, why: expect.stringContaining('no run time of this model is known, so 30 min') });
  });

  it("counts every run fal's own retries may make of it", () => {
    // "up to 10 attempts, before the request is marked as failed" (fal.ai/docs/documentation/serverless/reliability/retries)
    expect(listedBy('fal', T0, longestRun('fal', 5 * MIN, null), QUEUE, { runs: 10, ahead: [], now: T0 })).toMatchObject({
      at: T0 + 110 * MIN,
      why: expect.stringContaining("(twice fal's stated run of about 5 min, up to 10 runs as fal retries a failed one, plus 10 min in the queue)"),
    });
  });
});

describe('queuedBehind: when a request has surely started, behind the requests sent before it', () => {
  const MIN = 60_000;
  const life = 10 * MIN;
  it('starts at its send with nothing ahead, and once an ahead request heard to have ended has ended', () => {
    expect(queuedBehind(T0, [], T0)).toBe(T0);
    expect(queuedBehind(T0, [{ sentAt: T0 - MIN, endedAt: T0 + 3 * MIN, inFlight: false, lifeMs: life }], T0 + 60 * MIN)).toBe(T0 + 3 * MIN);
  });
  it('counts ahead requests of unknown outcome one after another, each at its longest life', () => {
    const unknown = (at: number) => ({ sentAt: at, endedAt: null, inFlight: false, lifeMs: life });
    expect(queuedBehind(T0, [unknown(T0 - 2 * MIN), unknown(T0 - MIN)], T0)).toBe(T0 + 2 * life);
  });
  it('never before now while one ahead is still queued or running at the provider', () => {
    const now = T0 + 300 * MIN;
    expect(queuedBehind(T0, [{ sentAt: T0 - MIN, endedAt: null, inFlight: true, lifeMs: life }], now)).toBe(now);
    expect(listedBy('fal', T0, longestRun('fal', 5 * MIN, null), 0, { runs: 1, ahead: [{ sentAt: T0 - MIN, endedAt: null, inFlight: true, lifeMs: life }], now }).at).toBeGreaterThan(now);
  });
});

describe('lookupVerdict: a listing cut short proves nothing', () => {
  const cut = 'fal listed more than the 1000 requests of fal-ai/flux/dev a lookup reads in the window asked';
  it.each<[string, Partial<LookupFacts>, 'adopt' | 'again' | 'ask', RegExp]>([
    ['nothing read matches, tries remain', { cut, tries: 1 }, 'again', /^the listing could not be looked through whole: fal listed more .* \(lookup 1 of 5\)$/],
    ['nothing read matches after the last try', { cut, tries: 5 }, 'ask', /^the listing could not be looked through whole: .*; whether it was accepted cannot be told from it \(after 5 lookups\)$/],
    ['one read matches, another may be in the rest', { cut, found: [found('r1', T0 + 1_000)] }, 'ask', /^request r1 has this input, but fal listed more .*, so whether another one has it too cannot be told$/],
  ])('%s', (_name, more, action, why) => {
    const verdict = lookupVerdict(facts(more));
    expect(verdict.action).toBe(action);
    expect(verdict.why).toMatch(why);
    expect(verdict.why).not.toMatch(/never accepted/);
  });
});

describe('failedLookupVerdict: a listing that fails after the tries', () => {
  const now = Date.parse('2026-12-02T12:00:00Z');
  it('looks again within the tries, and past them asks the person only once the request would surely be listed', () => {
    expect(failedLookupVerdict(2, 10, null, now)).toBe('again');
    expect(failedLookupVerdict(10, 10, null, now)).toBe('ask');
    // An earlier lookup found it could still be queued or running for a minute: not handed to a person, who could resend it.
    expect(failedLookupVerdict(12, 10, now + 60_000, now)).toBe('again');
    expect(failedLookupVerdict(12, 10, now - 1, now)).toBe('ask');
  });
});
