import { describe, expect, it } from 'vitest';
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
