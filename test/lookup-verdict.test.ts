import { describe, expect, it } from 'vitest';
import { learnDurations } from '../main/engine/durations.ts';
import { listedBy, UNKNOWN_RUN_MS } from '../main/engine/listedBy.ts';
import { lookupVerdict, SKEW_MS, type LookupFacts } from '../main/engine/lookupVerdict.ts';

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
  it('counts twice the stated run, or the slowest run learned here when longer, then the queue allowance', () => {
    expect(listedBy('fal', T0, 5 * 60_000, null, QUEUE)).toEqual({
      at: T0 + 20 * 60_000,
      why: `fal lists a request once it has ended, and one sent then could still be queued or running until ${new Date(T0 + 20 * 60_000).toISOString()} (twice fal's stated run of about 5 min, plus 10 min in the queue)`,
    });
    const slow = learnDurations([60_000, 120_000, 15 * 60_000]);
    expect(listedBy('fal', T0, 5 * 60_000, slow, QUEUE)).toMatchObject({ at: T0 + 25 * 60_000, why: expect.stringContaining('(the slowest of 3 runs of this model here, 15 min, plus 10 min in the queue)') });
    expect(listedBy('fal', T0, undefined, learnDurations([2_000, 2_500, 3_000]), QUEUE).at).toBe(T0 + 3_000 + QUEUE);
    expect(listedBy('fal', T0, undefined, null, QUEUE)).toMatchObject({ at: T0 + UNKNOWN_RUN_MS + QUEUE, why: expect.stringContaining('no run time of this model is known, so 30 min') });
  });
});
