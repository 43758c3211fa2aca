import { fromMicros, type Task, type TaskOutput } from '../domain/tasks/model.ts';

/** The JSON a task has in `studio tasks --json`, documented in the README. */
export function taskJson(t: Task, projectName: string, outputs: TaskOutput[]) {
  return {
    id: t.id,
    project: projectName,
    kind: t.kind,
    status: t.status,
    provider: t.provider,
    model: t.model,
    input: t.input,
    attempts: t.attempts,
    charged: t.charged,
    remoteRequestId: t.remoteRequestId,
    submitStartedAt: iso(t.submitStartedAt),
    submittedAt: iso(t.submittedAt),
    progress: t.progress,
    costEstimated: fromMicros(t.costEstimated),
    costEstimateSource: t.costEstimateSource,
    costActual: fromMicros(t.costActual),
    costActualSource: t.costActualSource,
    currency: t.currency,
    outputPath: t.outputPath,
    outputSha256: t.outputSha256,
    outputs: outputs.map((o) => ({ path: o.path, sha256: o.sha256, bytes: o.bytes, contentType: o.contentType, machine: o.machine })),
    note: t.note,
    error: t.error,
    unknownReason: t.unknownReason,
    createdAt: iso(t.createdAt),
    finishedAt: iso(t.finishedAt),
  };
}

export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

export function money(micros: number | null, currency = 'USD'): string {
  return micros === null ? '-' : `${(micros / 1e6).toFixed(2)} ${currency}`;
}

export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
}

/** Whether a task's cost figure is billed (from what the provider reported) or an estimate, in a word. */
export function costBasis(t: Pick<Task, 'costActual' | 'costEstimated' | 'charged' | 'status'>): string {
  if (t.charged === 'no' && (t.status === 'FAILED' || t.status === 'CANCELLED')) return 'not charged';
  if (t.costActual !== null) return 'billed';
  if (t.costEstimated === null) return 'price unknown';
  return t.charged === 'maybe' ? 'possibly charged' : 'estimated';
}
