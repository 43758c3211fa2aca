import { ResultGone, ResultMissing, type ProviderAdapter, type ProviderResult } from '../providers/port.ts';
import { FolderGone, UnusableResult, type Clock, type OutputStore, type OutputTarget, type ResultRecord, type SavedOutput } from '../domain/ports.ts';
import type { Task } from '../domain/tasks/model.ts';
import type { TaskStore } from '../store/port.ts';
import { collectRetry, NO_ROUNDS, roundNow, type CollectPolicy, type MissingResult } from './collectRetry.ts';
import { databaseUnavailable } from './health.ts';
import { stopPoint } from './stopPoints.ts';
import { recordCost } from './storableCost.ts';

export type SaveOutcome =
  /** Saved with its record; `unusable` names files of the result that were not the media they should be. */
  | { state: 'saved'; record: ResultRecord; unusable: string[] }
  /** No file of the result is the media it should be: retrying cannot mend it. */
  | { state: 'unusable'; message: string }
  /** The provider says the result no longer exists. */
  | { state: 'gone'; message: string }
  /** Not saved yet, and still at the provider: poll and collect it again later. */
  | { state: 'later'; message: string }
  /** The provider said the result was complete, yet a file of it answered that nothing is there: asked again later. */
  | { state: 'missing'; missing: MissingResult; message: string }
  | { state: 'stopped' };

export interface SavePorts {
  repo: Pick<TaskStore, 'setNote'>;
  provider: Pick<ProviderAdapter, 'download'>;
  outputs: OutputStore;
  clock: Clock;
  log: (message: string) => void;
}

/** Downloads tried in a row before a result the provider still holds is left for a later poll. */
const DOWNLOAD_TRIES = 3;
const LONGEST_WAIT_MS = 30_000;

/** A filesystem failure in words a person can act on. */
function describeSaveError(err: unknown): string {
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === 'ENOSPC') return 'the disk is full; free some space';
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return 'the data folder cannot be written; check its permissions';
  return (err as Error)?.message ?? String(err);
}

/**
 * Saves every file of a paid result and the task's result record, so a crash before the row says SUCCEEDED
 * loses nothing; while a save keeps failing, the reason is on the row. A file still at the provider is tried
 * a few times, then left for a later poll when the provider can be asked again (`collectLater`), else
 * retried for as long as the process lives. A file that is not the media it should be is left out; the
 * others are kept. A file the provider answers is not there (ResultMissing) is left for a later round, or at the
 * last round (`expired`) left out as expired; without `collectLater`, its rounds are waited out here (`rounds`).
 */
export async function saveResult(
  task: Task,
  result: ProviderResult,
  requestId: string | null,
  ports: SavePorts,
  options: {
    owner: string;
    collectLater: boolean;
    /** The words for a file found missing when this is the last round before it is called expired, else null. */
    expired?: (missing: MissingResult) => string | null;
    /**
     * Without `collectLater` (a result that cannot be asked for again, only its file fetched): the rounds a file found
     * missing is asked for again in, in this process, before it is left out as expired at `provider` (its name).
     */
    rounds?: { provider: string; policy: CollectPolicy; random: () => number };
  },
  signal: AbortSignal,
): Promise<SaveOutcome> {
  const { owner } = options;
  let failures = 0;
  const failed = async (err: unknown): Promise<boolean> => {
    failures++;
    const why = describeSaveError(err);
    ports.log(`task ${task.id}: the paid result could not be saved yet: ${why}`);
    try {
      await ports.repo.setNote(task.id, `the paid result could not be saved yet (${why}); it is kept and saving is retried`, { owner, now: ports.clock.now() });
    } catch (noteErr) {
      if (!databaseUnavailable(noteErr)) throw noteErr;
    }
    if (signal.aborted) return false;
    await ports.clock.sleep(Math.min(LONGEST_WAIT_MS, 500 * 2 ** Math.min(failures, 6)), signal).catch(() => undefined);
    return !signal.aborted;
  };
  const waitRound = async (note: string, ms: number): Promise<boolean> => {
    ports.log(`task ${task.id}: ${note}`);
    await ports.repo.setNote(task.id, note, { owner, now: ports.clock.now() }).catch((noteErr: unknown) => {
      if (!databaseUnavailable(noteErr)) throw noteErr;
    });
    if (signal.aborted) return false;
    await ports.clock.sleep(ms, signal).catch(() => undefined);
    return !signal.aborted;
  };

  if (result.outputs.every((o) => o.bytes)) return saveInHand(task, result, requestId, ports, failed);
  const saved: SavedOutput[] = [];
  const unusable: string[] = [];
  const expired: string[] = [];
  let missing: MissingResult | null = null;
  for (const [index, output] of result.outputs.entries()) {
    let rounds = NO_ROUNDS;
    for (let tries = 1; ; tries++) {
      try {
        saved.push(await ports.outputs.save(targetOf(task, index, output.contentType), await ports.provider.download(output, signal)));
        break;
      } catch (err) {
        if (err instanceof ResultGone) return { state: 'gone', message: err.message };
        // Still at the provider: the studio started where the folder is now collects it (the row keeps its request id).
        if (err instanceof FolderGone) {
          const words = `${err.message}; the result is left at ${task.provider} and collected when the studio starts from the folder's new place`;
          ports.log(`task ${task.id}: ${words}`);
          await ports.repo.setNote(task.id, words, { owner, now: ports.clock.now() }).catch((noteErr: unknown) => {
            if (!databaseUnavailable(noteErr)) throw noteErr;
          });
          return { state: 'stopped' };
        }
        // Asked again in rounds that back off (collectRetry.ts), not in a row; at the last, it is left out as expired.
        if (err instanceof ResultMissing && options.collectLater) {
          const found: MissingResult = { url: err.url, status: err.status!, message: err.message };
          const words = options.expired?.(found);
          if (words) {
            expired.push(words);
            unusable.push(`file ${index + 1}: ${words}`);
          } else missing ??= found;
          break;
        }
        // A result that cannot be asked for again (a synchronous answer's URL): the same bounded rounds, waited out here.
        if (err instanceof ResultMissing && options.rounds) {
          const found: MissingResult = { url: err.url, status: err.status!, message: err.message };
          const next = collectRetry(options.rounds.provider, found, rounds, roundNow(ports.clock), options.rounds.policy, options.rounds.random());
          if (next.action === 'expired') {
            expired.push(next.error);
            unusable.push(`file ${index + 1}: ${next.error}`);
            break;
          }
          rounds = next.rounds;
          if (!(await waitRound(next.note, next.delayMs))) return { state: 'stopped' };
          continue;
        }
        // A download may have been spoilt on the way, so an unusable one is fetched again before it is left out.
        if (err instanceof UnusableResult && tries >= DOWNLOAD_TRIES) {
          unusable.push(`file ${index + 1}: ${err.message}`);
          break;
        }
        if (tries >= DOWNLOAD_TRIES && options.collectLater) {
          return { state: 'later', message: `the result could not be saved yet (${describeSaveError(err)}); trying again shortly` };
        }
        if (!(await failed(err))) return { state: 'stopped' };
      }
    }
  }
  if (missing) return { state: 'missing', missing, message: missing.message };
  if (saved.length === 0) return expired.length > 0 ? { state: 'gone', message: expired[0]! } : { state: 'unusable', message: unusable.join('; ') };
  const record: ResultRecord = { idempotencyKey: task.idempotencyKey, requestId, ...recordCost(result), outputs: saved };
  for (;;) {
    try {
      await ports.outputs.record(task, record);
      return { state: 'saved', record, unusable };
    } catch (err) {
      if (!(await failed(err))) return { state: 'stopped' };
    }
  }
}

function targetOf(task: Task, index: number, contentType: string | null): OutputTarget {
  return { projectId: task.projectId, taskId: task.id, idempotencyKey: task.idempotencyKey, kind: task.kind, index, contentType };
}

/**
 * Bytes in hand exist nowhere else. Their record (paths and checksums) is written first, then every file to a
 * synced temporary file, and only then is each checked and placed: a crash at any point leaves the record to
 * find them all by checksum. When the project's folder cannot be
 * written, they go to the rescue place at once; while nothing can be written, they stay in memory and the
 * save is tried again for as long as the process lives.
 */
async function saveInHand(
  task: Task,
  result: ProviderResult,
  requestId: string | null,
  ports: SavePorts,
  failed: (err: unknown) => Promise<boolean>,
): Promise<SaveOutcome> {
  const { outputs } = ports;
  const meta = { idempotencyKey: task.idempotencyKey, requestId, ...recordCost(result) };
  for (let rescue = false; ; ) {
    try {
      const targets = result.outputs.map((o, i) => ({ target: targetOf(task, i, o.contentType), bytes: o.bytes! }));
      await outputs.record(task, { ...meta, outputs: targets.map((t) => outputs.plan(t.target, t.bytes, rescue)) }, rescue);
      for (const { target, bytes } of targets) await outputs.stage(target, bytes, rescue);
      const kept: SavedOutput[] = [];
      const unusable: string[] = [];
      for (const { target, bytes } of targets) {
        try {
          kept.push(await outputs.keep(target, bytes, rescue));
        } catch (err) {
          if (!(err instanceof UnusableResult)) throw err;
          unusable.push(`file ${target.index + 1}: ${err.message}`);
        }
        stopPoint('mid-save', task.id);
      }
      if (kept.length === 0) return { state: 'unusable', message: unusable.join('; ') };
      const record: ResultRecord = { ...meta, outputs: kept };
      if (unusable.length > 0) await outputs.record(task, record, rescue);
      return { state: 'saved', record, unusable };
    } catch (err) {
      if (!rescue) {
        rescue = true;
        continue;
      }
      rescue = false;
      if (!(await failed(err))) {
        ports.log(`task ${task.id}: the studio stopped before a paid result held only in memory could be saved`);
        return { state: 'stopped' };
      }
    }
  }
}
