import { describe, expect, it } from 'vitest';
import { etaWords } from '../main/engine/eta.ts';
import { renderEta } from '../main/engine/renderEta.ts';

describe("a render's time left, from its progress and the time since it started", () => {
  it.each([
    ['no progress written yet', null, 5_000, null],
    ['nothing made yet', 0, 5_000, null],
    ['too little made to judge the pace', 0.01, 5_000, null],
    ['too soon after the start to judge', 0.5, 900, null],
    ['a progress that is no number', Number.NaN, 5_000, null],
    ['a quarter in 10 s: 30 s to go at that pace', 0.25, 10_000, { remainingMs: 30_000, late: false }],
    ['half in 8 s: 8 s to go', 0.5, 8_000, { remainingMs: 8_000, late: false }],
    ['nine tenths in 45 s: 5 s to go', 0.9, 45_000, { remainingMs: 5_000, late: false }],
    ['all of it made, the file being checked: nothing to go', 1, 12_000, { remainingMs: 0, late: false }],
    ['a report past the end counts as the end', 1.2, 12_000, { remainingMs: 0, late: false }],
  ] as const)('%s', (_, progress, elapsed, eta) => {
    expect(renderEta(progress, elapsed)).toEqual(eta);
  });

  it('reads as the other estimates do', () => {
    expect(etaWords(renderEta(0.4, 14_000)!)).toBe('about 20 s left');
    expect(etaWords(renderEta(0.1, 60_000)!)).toBe('about 9 min left');
  });
});
