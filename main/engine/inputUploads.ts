import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { ProviderAdapter } from '../providers/port.ts';
import type { Task, TaskEvent } from '../tasks/model.ts';
import type { TaskStore } from '../store/port.ts';
import { dataUri, mimeOf } from './outputRefs.ts';

/** Where a task's history is read and, before a send, written: the uploads it made are noted on it. */
export interface UploadHistory {
  repo: Pick<TaskStore, 'events'> & Partial<Pick<TaskStore, 'note'>>;
  /** Given only when the request is about to be sent: then a file not uploaded yet is uploaded, and noted. */
  now?: () => number;
}

/** An input file could not be put in the provider's storage: nothing was sent, so it is tried again later. */
export class UploadFailed extends Error {}

/** The URLs this task's input files were uploaded to at `provider`, by the SHA-256 of their bytes. */
function uploadsIn(events: readonly TaskEvent[], provider: string): Map<string, string> {
  const known = new Map<string, string>();
  for (const e of events) {
    const u = (e.detail as { upload?: { provider?: unknown; sha256?: unknown; url?: unknown } } | null)?.upload;
    if (u?.provider === provider && typeof u.sha256 === 'string' && typeof u.url === 'string') known.set(u.sha256, u.url);
  }
  return known;
}

/**
 * How a provider that takes input files by URL gets each one: uploaded once per task and content, its URL noted on
 * the task's history before anything is sent, so every attempt sends the same URL and a lookup rebuilds the request
 * exactly as sent. A lookup (no `now`) only reads the notes: a file with none was sent inline, as before uploads.
 */
export async function uploadedInput(task: Pick<Task, 'id'>, provider: ProviderAdapter & Required<Pick<ProviderAdapter, 'upload'>>, history: UploadHistory) {
  const known = uploadsIn(await history.repo.events(task.id), provider.id);
  return async (path: string): Promise<string> => {
    const bytes = await readFile(path);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const kept = known.get(sha256);
    if (kept) return kept;
    if (!history.now || !history.repo.note) return dataUri(path, bytes);
    let url: string;
    try {
      url = await provider.upload({ bytes, contentType: mimeOf(path), name: basename(path) });
    } catch (err) {
      throw new UploadFailed(`could not put ${basename(path)} in ${provider.id}'s storage (${(err as Error).message}); nothing was sent`);
    }
    await history.repo.note(task.id, `uploaded ${basename(path)} to ${provider.id}'s storage, to send its URL`, { upload: { provider: provider.id, sha256, url } }, history.now());
    known.set(sha256, url);
    return url;
  };
}
