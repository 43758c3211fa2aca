/** A machine whose clock is further than this from the team database's is told so at start. */
export const CLOCK_WARN_MS = 10_000;

/** An offset as a person reads it: "1 h 2 min", "3 min 5 s", "12.3 s". */
export function howFar(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 60_000) return `${(abs / 1000).toFixed(1)} s`;
  const s = Math.round(abs / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  const min = Math.round(s / 60);
  return `${Math.floor(min / 60)} h ${min % 60} min`;
}

/** An offset with its direction: "3 min 0 s ahead", "1 h 0 min behind", "0.2 s". */
export function describeOffset(offsetMs: number): string {
  if (Math.abs(offsetMs) < 1000) return howFar(offsetMs);
  return `${howFar(offsetMs)} ${offsetMs > 0 ? 'ahead' : 'behind'}`;
}

/** An offset against `other` clock: "within 0.2 s of the database's", "3 min 0 s ahead of the database's". */
export function comparedWith(offsetMs: number, other: string): string {
  if (Math.abs(offsetMs) < 1000) return `within ${howFar(offsetMs)} of ${other}`;
  return `${howFar(offsetMs)} ${offsetMs > 0 ? 'ahead of' : 'behind'} ${other}`;
}

/**
 * What this machine is told at start when its clock (this machine's less the database's, `offsetMs`) is further
 * than CLOCK_WARN_MS from the team database's; null when it is close enough.
 */
export function clockWarning(offsetMs: number): string | null {
  if (Math.abs(offsetMs) <= CLOCK_WARN_MS) return null;
  return (
    `this computer's clock is ${comparedWith(offsetMs, "the team database's")}. ` +
    "The studio keeps the team's times by the database's clock, so nothing is sent or looked up at the wrong time, " +
    "but set this computer's clock right: turn on automatic date and time (network time) in its settings."
  );
}

/** A move of the wall clock apart from the monotonic one past this is a step (or a sleep), not a tick's jitter. */
export const CLOCK_STEP_MS = 1_000;

/**
 * Whether the wall clock was stepped (set by hand or by network time) or the system slept between two readings
 * of both clocks: the monotonic clock runs on steadily while awake and is never set, so their moves then differ.
 */
export function clockStepped(from: { wall: number; mono: number }, to: { wall: number; mono: number }): boolean {
  return Math.abs(to.wall - from.wall - (to.mono - from.mono)) > CLOCK_STEP_MS;
}
