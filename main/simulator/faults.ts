/**
 * Faults the simulator injects on request, so tests and curious people can watch the studio meet them.
 * A fault in a queue applies to the next call of its kind, once; a rate applies to every call, at random.
 */
export const SUBMIT_FAULTS = [
  'reject', // 422 before accepting: nothing charged
  'rate-limit', // 429 with Retry-After: nothing charged
  'unavailable', // 503 before accepting: nothing charged
  'drop-after-accept', // accepted and charged, then the connection is cut before the answer
  'error-after-accept', // accepted and charged, then a 502 from a gateway that never learnt the request id
  'accepted-5xx', // accepted and charged, then a 500 or 504 that names the request in x-request-id
  'cut-body', // accepted and charged, the headers (with x-request-id) sent, then the connection cut mid-body
  'malformed-json', // accepted and charged, then an answer that is not JSON
  'slow-body', // accepted and charged, then an answer that trickles slower than any timeout
] as const;
export type SubmitFault = (typeof SUBMIT_FAULTS)[number];

export const JOB_FAULTS = [
  'fail', // the job fails at the provider
  'never-finish', // the job stays in progress forever
  'expired-result', // the job finishes, but its result URL has already expired
  'result-401-once', // the job finishes; the first call for its result or file is refused with a 401, later ones work
] as const;
export type JobFault = (typeof JOB_FAULTS)[number];

export const STATUS_FAULTS = ['server-error', 'malformed-json'] as const;
export type StatusFault = (typeof STATUS_FAULTS)[number];

export interface Faults {
  latencyMs?: number;
  submit?: SubmitFault[];
  job?: JobFault[];
  status?: StatusFault[];
  rates?: {
    submit?: Partial<Record<SubmitFault, number>>;
    job?: Partial<Record<JobFault, number>>;
    status?: Partial<Record<StatusFault, number>>;
  };
  /** Seeds the random choices, so a failing run can be repeated. */
  seed?: number;
}

export class FaultsError extends Error {}

/** Checks a faults object as a person might type it, naming what is wrong. */
export function parseFaults(value: unknown): Faults {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new FaultsError('faults must be a JSON object');
  const f = value as Record<string, unknown>;
  const list = <T extends string>(key: string, allowed: readonly T[]): T[] | undefined => {
    const v = f[key];
    if (v === undefined) return undefined;
    if (!Array.isArray(v) || v.some((x) => !allowed.includes(x))) {
      throw new FaultsError(`faults.${key} must be a list of ${allowed.join(', ')}`);
    }
    return v as T[];
  };
  const rates = (f.rates ?? {}) as Record<string, Record<string, unknown>>;
  for (const [group, allowed] of [['submit', SUBMIT_FAULTS], ['job', JOB_FAULTS], ['status', STATUS_FAULTS]] as const) {
    for (const [name, p] of Object.entries(rates[group] ?? {})) {
      if (!(allowed as readonly string[]).includes(name) || typeof p !== 'number' || p < 0 || p > 1) {
        throw new FaultsError(`faults.rates.${group}.${name} must be a known fault with a probability from 0 to 1`);
      }
    }
  }
  return {
    latencyMs: typeof f.latencyMs === 'number' ? f.latencyMs : undefined,
    submit: list('submit', SUBMIT_FAULTS),
    job: list('job', JOB_FAULTS),
    status: list('status', STATUS_FAULTS),
    rates: rates as Faults['rates'],
    seed: typeof f.seed === 'number' ? f.seed : undefined,
  };
}

/** A small seeded generator (mulberry32): the same seed gives the same faults. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Takes the next queued fault of a kind, else draws one from the rates. */
export function nextFault<T extends string>(queue: T[] | undefined, rates: Partial<Record<T, number>> | undefined, random: () => number): T | undefined {
  const queued = queue?.shift();
  if (queued) return queued;
  let roll = random();
  for (const [name, p] of Object.entries(rates ?? {}) as [T, number][]) {
    if (roll < p) return name;
    roll -= p;
  }
  return undefined;
}
