import { ResultGone, type ProviderAdapter, type ProviderResult } from '../providers/port.ts';
import { UnusableResult, type Clock, type OutputStore, type OutputTarget, type ResultRecord, type SavedOutput } from '../ports.ts';
import type { Task } from '../tasks/model.ts';
import type { TaskRepository } from '../tasks/repository.ts';
import { databaseUnavailable } from './health.ts';
import { stopPoint } from './stopPoints.ts';

export type SaveOutcome =
  /** Saved with its record; `unusable` names files of the result that were not the media they should be. */
  | { state: 'saved'; record: ResultRecord; unusable: string[] }
  /** No file of the result is the media it should be: retrying cannot mend it. */
  | { state: 'unusable'; message: string }
  /** The provider says the result no longer exists. */
  | { state: 'gone'; message: string }
  /** Not saved yet, and still at the provider: poll and collect it again later. */
  | { state: 'later'; message: string }
  | { state: 'stopped' };

export interface SavePorts {
  repo: Pick<TaskRepository, 'setNote'>;
  provider: Pick<ProviderAdapter, 'download'>;
  outputs: OutputStore;
  clock: Clock;
  log: (message: string) => void;
}

/** Downloads tried in a row before a result the provider still holds is left for a later poll. */
const DOWNLOAD_TRIES = 3;
const LONGEST_WAIT_MS = 30_000;

/** A filesystem failure in words a person can act on. */
export function describeSaveError(err: unknown): string {
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === 'ENOSPC') return 'the disk is full; free some space';
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return 'the data folder cannot be written; check its permissions';
  return (err as Error)?.message ?? String(err);
}

/**
 * Saves every file of a paid result, then the task's result record, so a crash before the row says
 * SUCCEEDED loses nothing. Bytes already in hand (a synchronous answer) exist nowhere else: they are
 * kept in memory and their save is retried for as long as the process lives, with the reason on the row.
 * A file still at the provider is tried a few times, then left for a later poll when the provider can be
 * asked again (`collectLater`), else retried like bytes in hand. A file that is not the media it should
 * be is tried a few times and then left out; the others are kept.
 */
export async function saveResult(
  task: Task,
  result: ProviderResult,
  requestId: string | null,
  ports: SavePorts,
  options: { owner: string; collectLater: boolean },
  signal: AbortSignal,
): Promise<SaveOutcome> {
  const { owner } = options;
  let failures = 0;
  const failed = async (err: unknown): Promise<boolean> => {
    failures++;
    const why = describeSaveError(err);
    ports.log(`task ${task.id}: the paid result could not be saved yet: ${why}`);
    try {
      ports.repo.setNote(task.id, `the paid result could not be saved yet (${why}); it is kept and saving is retried`, { owner, now: ports.clock.now() });
    } catch (noteErr) {
      if (!databaseUnavailable(noteErr)) throw noteErr;
    }
    if (signal.aborted) return false;
    await ports.clock.sleep(Math.min(LONGEST_WAIT_MS, 500 * 2 ** Math.min(failures, 6)), signal).catch(() => undefined);
    return !signal.aborted;
  };

  const saved: SavedOutput[] = [];
  const unusable: string[] = [];
  for (const [index, output] of result.outputs.entries()) {
    const target = { projectId: task.projectId, taskId: task.id, idempotencyKey: task.idempotencyKey, kind: task.kind, index, contentType: output.contentType };
    for (let tries = 1; ; tries++) {
      try {
        if (output.bytes) saved.push(await keepSomewhere(ports.outputs, target, output.bytes));
        else saved.push(await ports.outputs.save(target, await ports.provider.download(output, signal)));
        break;
      } catch (err) {
        if (err instanceof ResultGone) return { state: 'gone', message: err.message };
        // Kept bytes are judged once; a download may have been spoilt on the way, so it is fetched again first.
        if (err instanceof UnusableResult && (output.bytes || tries >= DOWNLOAD_TRIES)) {
          unusable.push(`file ${index + 1}: ${err.message}`);
          break;
        }
        if (!output.bytes && tries >= DOWNLOAD_TRIES && options.collectLater) {
          return { state: 'later', message: `the result could not be saved yet (${describeSaveError(err)}); trying again shortly` };
        }
        if (!(await failed(err))) return stopped(task, output.bytes !== undefined, ports);
      }
    }
  }
  if (saved.length === 0) return { state: 'unusable', message: unusable.join('; ') };
  stopPoint('after-files', task.id);
  const record: ResultRecord = { idempotencyKey: task.idempotencyKey, requestId, costActual: result.costActual?.amount ?? null, outputs: saved };
  for (;;) {
    try {
      await ports.outputs.record(task, record);
      return { state: 'saved', record, unusable };
    } catch (err) {
      if (!(await failed(err))) return stopped(task, result.outputs.some((o) => o.bytes), ports);
    }
  }
}

/** Bytes in hand go to the project's folder, else to the rescue place in the data folder, else nowhere yet. */
async function keepSomewhere(outputs: OutputStore, target: OutputTarget, bytes: Uint8Array): Promise<SavedOutput> {
  try {
    return await outputs.keep(target, bytes);
  } catch (err) {
    if (err instanceof UnusableResult) throw err;
    return outputs.keep(target, bytes, true).catch(() => Promise.reject(err));
  }
}

function stopped(task: Task, inHand: boolean, ports: SavePorts): SaveOutcome {
  if (inHand) ports.log(`task ${task.id}: the studio stopped before a paid result held only in memory could be saved`);
  return { state: 'stopped' };
}
