import { isAbsoluteAnywhere } from '../domain/storedPaths.ts';
import type { ResultRecord } from '../domain/ports.ts';
import type { Task } from '../domain/tasks/model.ts';
import { untilWritten } from './durableWrite.ts';
import type { ExecutorOptions, ExecutorPorts } from './executorPorts.ts';
import { stopPoint } from './stopPoints.ts';

/**
 * Completes the row from a result record that is whole on disk. When the row moved on without this worker
 * (parked by another while this one was stalled), the result of the same attempt still completes it.
 */
export async function completeFromDisk(task: Task, record: ResultRecord, ports: ExecutorPorts, options: ExecutorOptions, signal: AbortSignal, unusable: string[] = []) {
  stopPoint('after-save', task.id);
  const { repo, clock } = ports;
  const out = { outputs: record.outputs, costActual: record.costActual, costSource: record.costSource, costUnits: record.costUnits ?? null, costReported: record.costReported ?? null, requestId: record.requestId };
  const done =
    (await untilWritten(() => repo.complete(task.id, out, { owner: options.owner, now: clock.now() }), ports, signal)) ??
    (await untilWritten(() => repo.completeAttempt(task.id, record.idempotencyKey, out, clock.now()), ports, signal));
  const costWhy = record.costWhy;
  if (done && costWhy) await untilWritten(() => repo.note(task.id, costWhy, { costWhy }, clock.now()), ports, signal);
  const kept = record.outputs.map((o) => o.path);
  const whole = `kept ${kept.length} of ${kept.length + unusable.length} files`;
  // Another worker may have completed the row from what was on disk while this one stalled mid-save: the files of
  // the same attempt it placed since are linked to it, never left to nothing.
  const linked = `${whole}: the files saved after the task was completed are linked to it now`;
  const late = done ? 0 : await untilWritten(() => repo.linkLateOutputs(task.id, record.idempotencyKey, record.outputs, linked, clock.now()), ports, signal);
  if (late) {
    ports.log(`task ${task.id}: ${late} file(s) of its result saved after it was completed are linked to it`);
  } else if (late === null) {
    // Never linked onto a result the person deleted (nor onto another attempt's): the file stays, and the task says where.
    const now = await repo.get(task.id);
    const deleted = now?.status === 'SUCCEEDED' && now.outputPath === null;
    const why = deleted ? 'the person had deleted the result of the task' : 'the task had moved on';
    ports.log(`task ${task.id}: not completed here; its result is kept at ${kept[0]}`);
    await repo.note(task.id, `the paid result of this attempt is kept at ${kept.join(', ')}, but ${why}`, { outputs: kept }, clock.now());
  } else if (unusable.length > 0) {
    await repo.note(task.id, `${whole}; left out: ${unusable.join('; ')}`, { outputs: kept }, clock.now());
  }
  const away = kept.filter((path) => isAbsoluteAnywhere(path));
  if (away.length > 0) {
    const words = `the data folder was moved or deleted while this paid result was saved; its files were written at ${away.join(', ')}, where the studio finds them`;
    ports.log(`task ${task.id}: ${words}`);
    await repo.note(task.id, words, { outputs: away }, clock.now());
  }
}
