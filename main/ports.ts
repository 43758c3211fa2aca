import type { Kind } from './tasks/model.ts';

/** The engine's view of time: wall-clock milliseconds for rows, a monotonic clock to notice system sleep. */
export interface Clock {
  now(): number;
  monotonic(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export interface SavedOutput {
  path: string;
  sha256: string;
  bytes: number;
}

export interface OutputTarget {
  projectId: number;
  taskId: number;
  kind: Kind;
  index: number;
  contentType: string | null;
}

/** Where paid results land: written whole to a temporary file, checked, then renamed, so no half file is ever seen. */
export interface OutputStore {
  save(target: OutputTarget, body: AsyncIterable<Uint8Array>): Promise<SavedOutput>;
}
