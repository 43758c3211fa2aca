import { setTimeout as delay } from 'node:timers/promises';
import type { Clock } from '../domain/ports.ts';

export const systemClock: Clock = {
  now: () => Date.now(),
  // performance.now() follows CLOCK_MONOTONIC, which stops while the machine sleeps; Date.now() does not.
  monotonic: () => performance.now(),
  sleep: (ms, signal) => delay(ms, undefined, { signal }),
};
