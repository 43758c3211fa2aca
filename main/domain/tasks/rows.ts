import { REPORTED_UNITS, type Actor, type Charged, type Kind, type ReportedUnit, type Status, type Task, type TaskEvent, type TaskOutput } from './model.ts';

export interface TaskRow {
  id: number;
  project_id: number;
  kind: Kind;
  provider: string;
  model: string;
  input_json: string;
  input_hash: string;
  status: Status;
  charged: Charged;
  attempts: number;
  max_attempts: number;
  next_attempt_at: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  heartbeat_at: number | null;
  submit_started_at: number | null;
  idempotency_key: string | null;
  remote_request_id: string | null;
  remote_handle: string | null;
  submitted_at: number | null;
  progress: number | null;
  cost_estimated: number | null;
  cost_estimate_source: string | null;
  cost_actual: number | null;
  cost_actual_source: string | null;
  cost_abandoned: number;
  billed_units?: number | null;
  billed_unit?: string | null;
  currency: string;
  output_path: string | null;
  output_sha256: string | null;
  error: string | null;
  unknown_reason: string | null;
  note: string | null;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
}

const reported = (unit: string | null | undefined): unit is ReportedUnit => (REPORTED_UNITS as readonly (string | null | undefined)[]).includes(unit);

export function rowToTask(r: TaskRow): Task {
  return {
    id: r.id,
    projectId: r.project_id,
    kind: r.kind,
    provider: r.provider,
    model: r.model,
    input: JSON.parse(r.input_json),
    inputHash: r.input_hash,
    status: r.status,
    charged: r.charged,
    attempts: r.attempts,
    maxAttempts: r.max_attempts,
    nextAttemptAt: r.next_attempt_at,
    leaseOwner: r.lease_owner,
    leaseExpiresAt: r.lease_expires_at,
    heartbeatAt: r.heartbeat_at,
    submitStartedAt: r.submit_started_at,
    idempotencyKey: r.idempotency_key,
    remoteRequestId: r.remote_request_id,
    remoteHandle: r.remote_handle === null ? null : JSON.parse(r.remote_handle),
    submittedAt: r.submitted_at,
    progress: r.progress,
    costEstimated: r.cost_estimated,
    costEstimateSource: r.cost_estimate_source,
    costActual: r.cost_actual,
    costActualSource: r.cost_actual_source,
    costAbandoned: r.cost_abandoned,
    billedUnits: typeof r.billed_units === 'number' && reported(r.billed_unit) && r.billed_unit !== 'money' ? { count: r.billed_units, unit: r.billed_unit } : null,
    costReported: reported(r.billed_unit) ? r.billed_unit : null,
    currency: r.currency,
    outputPath: r.output_path,
    outputSha256: r.output_sha256,
    error: r.error,
    unknownReason: r.unknown_reason,
    note: r.note,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    finishedAt: r.finished_at,
  };
}

export interface EventRow {
  id: number;
  task_id: number;
  at: number;
  from_status: Status | null;
  to_status: Status;
  actor: Actor;
  reason: string;
  detail_json: string | null;
}

export function rowToEvent(r: EventRow): TaskEvent {
  return {
    id: r.id,
    taskId: r.task_id,
    at: r.at,
    fromStatus: r.from_status,
    toStatus: r.to_status,
    actor: r.actor,
    reason: r.reason,
    detail: r.detail_json === null ? null : JSON.parse(r.detail_json),
  };
}

export interface OutputRow {
  task_id: number;
  idx: number;
  path: string;
  sha256: string;
  bytes: number | null;
  content_type: string | null;
  machine: string | null;
  machine_id?: string | null;
}

export function rowToOutput(r: OutputRow): TaskOutput {
  return { taskId: r.task_id, index: r.idx, path: r.path, sha256: r.sha256, bytes: r.bytes, contentType: r.content_type, machine: r.machine ?? null, machineId: r.machine_id ?? null };
}
