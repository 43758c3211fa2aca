import { costBasis } from '../domain/costBasis.ts';
import { moneyWords } from '../domain/money.ts';
import { isSimulated } from '../domain/simulated.ts';
import { fromMicros, type Task, type TaskOutput } from '../domain/tasks/model.ts';
import { creditsWords, taskCredits } from '../pricing/taskCredits.ts';

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
    // The simulator's made-up money, never charged: a script summing costs can leave it out.
    simulated: isSimulated(t.provider),
    costEstimateSource: t.costEstimateSource,
    costActual: fromMicros(t.costActual),
    costActualSource: t.costActualSource,
    // What the figure rests on: billed (money or credits the provider reported), counted from usage, estimated...
    costBasis: costBasis(t),
    // ElevenLabs: the credits, as it reported them (billed) or from the text (estimated).
    credits: taskCredits(t),
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

/**
 * Writes lines to a stream whose reader may close it early (`studio tasks | head`): from then on, what is left is
 * dropped quietly and the command finishes as it would have, as a pipe's writer does, rather than crash on EPIPE.
 */
export function lineWriter(stream: NodeJS.WritableStream & { writable: boolean }): (line: string) => void {
  let closed = false;
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    closed = true;
  });
  return (line) => {
    if (!closed && stream.writable) stream.write(`${line}\n`);
  };
}

export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

export function money(micros: number | null, currency = 'USD'): string {
  return micros === null ? '-' : moneyWords(micros, currency);
}

export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
}

/** A task's cost as a person reads it: billed, else estimated; the simulator's marked as never charged. */
export function taskCost(t: Pick<Task, 'costActual' | 'costEstimated' | 'currency' | 'provider'>): string {
  const cost = money(t.costActual ?? t.costEstimated, t.currency);
  return isSimulated(t.provider) && (t.costActual ?? t.costEstimated) !== null ? `${cost} (simulated)` : cost;
}

/** A cost with the task's credits beside it, at a provider that bills in credits: "0.054 USD (180 credits billed)". */
export function withCredits(cost: string, t: Pick<Task, 'provider' | 'model' | 'kind' | 'input' | 'billedUnits'>): string {
  const credits = taskCredits(t);
  return credits ? `${cost} (${creditsWords(credits)})` : cost;
}
