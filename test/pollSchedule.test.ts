import { describe, expect, it } from 'vitest';
import { expectedRemainingMs, learnDurations } from '../main/engine/durations.ts';
import { nextPollDelay, type PollScheduleInput } from '../main/engine/pollSchedule.ts';

// Past durations of one model: 10 s to 20 s, typically 15 s.
const learned = learnDurations([10_000, 12_000, 14_000, 15_000, 15_000, 16_000, 18_000, 20_000, 11_000, 17_000])!;
const base: PollScheduleInput = { elapsedMs: 0, learned, previousMs: 0, firstMs: 1_000, minMs: 250, maxMs: 10_000 };

describe('when to look at a request next', () => {
  it('learns the quick, typical and slow durations of a model', () => {
    expect(learned).toMatchObject({ fastMs: 10_900, typicalMs: 15_000, slowMs: 18_200 });
    expect(learnDurations([1_000, 2_000])).toBeNull();
  });

  it.each([
    ['nothing learned: the configured interval first', { learned: null }, 1_000],
    ['nothing learned: growing by half each look', { learned: null, previousMs: 4_000 }, 6_000],
    ['nothing learned: never past the longest gap', { learned: null, previousMs: 9_000 }, 10_000],
    ['learned, just sent: the first look when the quick ones end', { elapsedMs: 100 }, 10_800],
    ['learned, quick ones ending: close looks', { elapsedMs: 11_000 }, 913],
    ['learned, typical: close looks', { elapsedMs: 15_000 }, 913],
    ['learned, just past the slow tail: still close', { elapsedMs: 19_000 }, 913],
    ['learned, far past the slow tail: backing off', { elapsedMs: 38_200 }, 5_000],
    ['learned, very late: never past the longest gap', { elapsedMs: 300_000 }, 10_000],
    ['Retry-After stands over a close look', { elapsedMs: 15_000, retryAfterMs: 3_000 }, 3_000],
    ['Retry-After stands over the longest gap', { elapsedMs: 300_000, retryAfterMs: 60_000 }, 60_000],
    ['a clock set back an hour since the submit: the first look when the quick ones end', { elapsedMs: -3_600_000 }, 10_900],
    ['a narrow spread never looks more often than the shortest gap', { learned: learnDurations([5_000, 5_000, 5_001]), elapsedMs: 5_000 }, 250],
  ] as [string, Partial<PollScheduleInput>, number][])('%s', (_, change, wait) => {
    expect(nextPollDelay({ ...base, ...change })).toBe(wait);
  });

  it('estimates what is left from the durations longer than the time already run', () => {
    expect(expectedRemainingMs(learned, 0)).toBe(15_000);
    expect(expectedRemainingMs(learned, 16_000)).toBe(2_000);
    expect(expectedRemainingMs(learned, 25_000)).toBeNull();
    expect(expectedRemainingMs(null, 0)).toBeNull();
  });
});
