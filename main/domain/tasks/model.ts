/** `draft`: a storyboard drafted from an idea by a text model (main/pipeline/draft.ts). */
export const KINDS = ['image', 'clip', 'speech', 'render', 'draft'] as const;
export type Kind = (typeof KINDS)[number];

export const STATUSES = ['PENDING', 'RUNNING', 'SUBMITTED', 'SUCCEEDED', 'FAILED', 'OUTCOME_UNKNOWN', 'CANCELLED'] as const;
export type Status = (typeof STATUSES)[number];

export type Charged = 'no' | 'maybe' | 'yes';
export type Actor = 'engine' | 'person';

export interface Task {
  id: number;
  projectId: number;
  kind: Kind;
  provider: string;
  model: string;
  input: unknown;
  inputHash: string;
  status: Status;
  charged: Charged;
  attempts: number;
  maxAttempts: number;
  nextAttemptAt: number;
  leaseOwner: string | null;
  leaseExpiresAt: number | null;
  heartbeatAt: number | null;
  submitStartedAt: number | null;
  idempotencyKey: string | null;
  remoteRequestId: string | null;
  remoteHandle: Record<string, string> | null;
  submittedAt: number | null;
  progress: number | null;
  costEstimated: number | null;
  costEstimateSource: string | null;
  costActual: number | null;
  /** How the actual cost was reached from what the provider reported; null while there is none. */
  costActualSource: string | null;
  costAbandoned: number;
  /** The units the provider billed the actual cost in, as it reported them (ElevenLabs credits, Replicate seconds); null where none. */
  billedUnits?: BilledUnits | null;
  /** What the provider reported that the actual cost comes from (see costBasis.ts); null for tasks finished before it was kept. */
  costReported?: ReportedUnit | null;
  currency: string;
  outputPath: string | null;
  outputSha256: string | null;
  error: string | null;
  unknownReason: string | null;
  /** What the engine is waiting on, for the person (still running at the provider, a save that keeps failing). */
  note: string | null;
  createdAt: number;
  updatedAt: number;
  finishedAt: number | null;
}

/**
 * What a provider reported for one request that its actual cost comes from: money or credits (a bill), or a count
 * of what it bills by (seconds of run time, images, tokens) that the studio prices at the catalogue's price.
 */
export const REPORTED_UNITS = ['money', 'credit', 'second', 'image', 'token'] as const;
export type ReportedUnit = (typeof REPORTED_UNITS)[number];

/** A count of what a provider bills by, as it reported it for one request. */
export interface BilledUnits {
  count: number;
  unit: Exclude<ReportedUnit, 'money'>;
}

/** One saved file of a task's result. */
export interface TaskOutput {
  taskId: number;
  index: number;
  path: string;
  sha256: string;
  bytes: number | null;
  contentType: string | null;
  /** The machine that saved it, or null for files saved before machines were recorded. */
  machine: string | null;
  /** That machine's id (see config/machineId.ts), which tells two machines of one name apart; absent or null for files saved before it was recorded. */
  machineId?: string | null;
}

/** How to reach a request at its provider again. */
export interface RemoteRef {
  requestId: string;
  model: string;
  handle: Record<string, string> | null;
}

export interface TaskEvent {
  id: number;
  taskId: number;
  at: number;
  fromStatus: Status | null;
  toStatus: Status;
  actor: Actor;
  reason: string;
  detail: unknown;
}

export interface NewTask {
  projectId: number;
  kind: Kind;
  provider: string;
  model: string;
  input: unknown;
  maxAttempts?: number;
  dependsOn?: number[];
  /** What it is expected to cost, known before it is sent (Generate prices every step), so budgets count it. */
  /** cost null: no price is known (the person confirmed buying it anyway). */
  estimate?: { cost: number | null; source: string; currency: string };
}

export function isKind(value: string): value is Kind {
  return (KINDS as readonly string[]).includes(value);
}

/** Money is kept in micro-units; people read currency units. */
export const MICROS = 1_000_000;
export const toMicros = (amount: number): number => Math.round(amount * MICROS);
export const fromMicros = (micros: number | null): number | null => (micros === null ? null : micros / MICROS);
