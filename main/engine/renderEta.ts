import type { StepEta } from './eta.ts';

/** Before this share of the film is made, the pace is mostly ffmpeg starting up: no estimate from it. */
export const MIN_PROGRESS = 0.02;
/** Nor before the render has run this long: a first report a moment after the claim says little. */
export const MIN_ELAPSED_MS = 1_000;

/**
 * A render's time left from its own progress (written on its row while ffmpeg runs) and the time since it was
 * claimed: the pace so far, carried to the end. A render is made on this machine, so its own pace says more than
 * past renders of other films do. Null while too little of it is done to judge.
 */
export function renderEta(progress: number | null, elapsedMs: number): StepEta | null {
  if (progress === null || !Number.isFinite(progress) || progress < MIN_PROGRESS || elapsedMs < MIN_ELAPSED_MS) return null;
  const done = Math.min(1, progress);
  return { remainingMs: Math.round((elapsedMs * (1 - done)) / done), late: false };
}
