import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { UploadRefused, type ProviderAdapter } from '../providers/port.ts';
import type { Task, TaskEvent } from '../domain/tasks/model.ts';
import type { InputUpload, TaskStore } from '../store/port.ts';
import { dataUri, mimeOf } from './outputRefs.ts';

/** Where a task's history is read, and, for a send, where the uploads made for it are gathered. */
export interface UploadHistory {
  repo: Pick<TaskStore, 'events'>;
  /**
   * Given only when the request is about to be sent: each file is uploaded for this attempt and listed here, for
   * the boundary mark to keep in the same write (never noted apart, where a stalled worker's late note could land).
   */
  sending?: InputUpload[];
}

/** An input file could not be put in the provider's storage: nothing was sent. */
export class UploadFailed extends Error {
  constructor(
    readonly file: string,
    readonly provider: string,
    readonly problem: string,
    /** Asking again gets the same answer (a refused key, an answer with no place to put the file). */
    readonly lasting: boolean,
  ) {
    super(`could not put ${file} in ${provider}'s storage (${problem}); nothing was sent`);
  }
}

/**
 * The URLs the attempt `key` sent, by the SHA-256 of their bytes: those its boundary mark keeps. Anything noted
 * after the mark (another attempt's, or a stalled worker's that lost the row) is not what that request named.
 */
function uploadsOf(events: readonly TaskEvent[], key: string | null, provider: string): Map<string, string> {
  const known = new Map<string, string>();
  for (let i = events.length - 1; i >= 0; i--) {
    const d = events[i]!.detail as { idempotencyKey?: unknown; uploads?: Partial<InputUpload>[] } | null;
    if (events[i]!.reason !== 'submit started' || (key !== null && d?.idempotencyKey !== key)) continue;
    for (const u of Array.isArray(d?.uploads) ? d.uploads : []) {
      if (u.provider === provider && typeof u.sha256 === 'string' && typeof u.url === 'string') known.set(u.sha256, u.url);
    }
    break;
  }
  return known;
}

/**
 * How a provider that takes input files by URL gets each one: uploaded anew for every attempt, as an account may
 * have its uploads deleted after as little as a second (fal docs, platform-apis/v1/storage/settings:
 * `expiration_duration_seconds`, "Seconds after which newly uploaded files automatically expire and are deleted"),
 * so an earlier attempt's URL may name nothing by now. A lookup (no `sending`) rebuilds the request of the task's
 * current attempt from the URLs its boundary mark keeps: a file with none was sent inline, as before uploads.
 */
export async function uploadedInput(task: Pick<Task, 'id' | 'idempotencyKey'>, provider: ProviderAdapter & Required<Pick<ProviderAdapter, 'upload'>>, history: UploadHistory) {
  const { sending } = history;
  const known = sending ? new Map<string, string>() : uploadsOf(await history.repo.events(task.id), task.idempotencyKey, provider.id);
  return async (path: string): Promise<string> => {
    const bytes = await readFile(path);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const kept = known.get(sha256);
    if (kept) return kept;
    if (!sending) return dataUri(path, bytes);
    let url: string;
    try {
      url = await provider.upload({ bytes, contentType: mimeOf(path), name: basename(path) });
    } catch (err) {
      throw new UploadFailed(basename(path), provider.id, (err as Error).message, err instanceof UploadRefused);
    }
    sending.push({ provider: provider.id, sha256, url });
    known.set(sha256, url);
    return url;
  };
}
