import { expectedRemainingMs, type LearnedDurations } from './durations.ts';

/** When a step under way is likely to end, judged against its model's past durations on this machine. */
export interface StepEta {
  /** Expected time left; null once it has run past the slow tail, where there is no honest estimate. */
  remainingMs: number | null;
  /** It has run longer than nine in ten of this model's past requests here. */
  late: boolean;
}

/**
 * A step that has run `elapsedMs` (0 for one not started): the median of the past durations longer than that,
 * less the time run. Null while too little is learned.
 */
export function stepEta(learned: LearnedDurations | null, elapsedMs: number): StepEta | null {
  if (!learned) return null;
  const elapsed = Math.max(0, elapsedMs);
  const remaining = elapsed > learned.slowMs ? null : expectedRemainingMs(learned, elapsed);
  return remaining === null ? { remainingMs: null, late: true } : { remainingMs: remaining, late: false };
}

/** A span as a person reads an estimate: to the second under 10 s, to 5 s under a minute, then minutes. */
export function spanWords(ms: number): string {
  const s = Math.max(1, Math.round(ms / 1000));
  if (s < 10) return `${s} s`;
  if (s < 60) return `${Math.min(55, Math.round(s / 5) * 5)} s`;
  const min = Math.round(s / 60);
  if (min < 60) return `${min} min`;
  return min % 60 === 0 ? `${min / 60} h` : `${Math.floor(min / 60)} h ${min % 60} min`;
}

export function etaWords(eta: StepEta): string {
  return eta.remainingMs === null ? 'taking longer than usual' : `about ${spanWords(eta.remainingMs)} left`;
}

/** One step of a plan still to finish: what it waits for, and how long it has left once it may start. */
export interface PathStep {
  key: string;
  dependsOn: readonly string[];
  /** 0 for a step done; null when nothing is learned of its model. */
  eta: StepEta | null;
}

export interface VideoEta {
  /** The longest chain of expected times left; a late step counts as ending now, so this is then a least. */
  remainingMs: number;
  /** A step on the way is taking longer than usual. */
  late: boolean;
}

/**
 * When the last step is likely to end: the critical path through what is left (an image, then its clip, then
 * the render), each step taking its expected time left once the steps it waits for are done. It assumes a free
 * slot for each step, as the example's concurrency gives. Null when a step's model has no history here.
 */
export function criticalPath(steps: readonly PathStep[]): VideoEta | null {
  const byKey = new Map(steps.map((s) => [s.key, s]));
  const done = new Map<string, VideoEta | null>();
  const finish = (key: string, seen: ReadonlySet<string>): VideoEta | null => {
    if (done.has(key)) return done.get(key)!;
    const step = byKey.get(key);
    // A dependency outside the plan (an earlier take's task) is counted done; a cycle cannot be planned.
    if (!step || seen.has(key)) return { remainingMs: 0, late: false };
    let result: VideoEta | null = step.eta && { remainingMs: step.eta.remainingMs ?? 0, late: step.eta.late };
    let start: VideoEta = { remainingMs: 0, late: false };
    for (const dep of step.dependsOn) {
      const before = finish(dep, new Set([...seen, key]));
      if (!before) result = null;
      else start = { remainingMs: Math.max(start.remainingMs, before.remainingMs), late: start.late || before.late };
    }
    if (result) result = { remainingMs: start.remainingMs + result.remainingMs, late: start.late || result.late };
    done.set(key, result);
    return result;
  };
  let last: VideoEta = { remainingMs: 0, late: false };
  for (const s of steps) {
    const f = finish(s.key, new Set());
    if (!f) return null;
    last = { remainingMs: Math.max(last.remainingMs, f.remainingMs), late: last.late || f.late };
  }
  return last;
}

export function videoEtaWords(eta: VideoEta): string {
  if (!eta.late) return `about ${spanWords(eta.remainingMs)} left`;
  return eta.remainingMs > 0 ? `a step is taking longer than usual; at least ${spanWords(eta.remainingMs)} more` : 'a step is taking longer than usual';
}
