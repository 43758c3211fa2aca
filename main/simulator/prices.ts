import type { Kind } from '../tasks/model.ts';

/** What the simulator quotes, in micro-USD: per image, per second of clip or speech. Fake, by design. */
export const PRICES: Record<Kind, number> = {
  image: 40_000,
  clip: 100_000,
  speech: 15_000,
  render: 0,
};
