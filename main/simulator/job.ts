import type { Kind } from '../domain/tasks/model.ts';
import type { JobFault } from './faults.ts';
import type { Media } from './media.ts';

/** A simulated request: what the server keeps of it in memory and, without its media, in the shared job store. */

export interface Charge {
  requestId: string;
  idempotencyKey: string | null;
  inputHash: string;
  kind: Kind;
  model: string;
  quoted: number;
  billed: number;
  at: number;
}

type JobStatus = 'IN_QUEUE' | 'IN_PROGRESS' | 'COMPLETED' | 'FAILED' | 'CANCELLED';

export interface Job {
  id: string;
  kind: Kind;
  model: string;
  input: Record<string, unknown>;
  createdAt: number;
  durationMs: number;
  charge: Charge;
  fault: JobFault | undefined;
  /** A once-only fault (`result-401-once`) has been given. */
  faultSpent: boolean;
  status: JobStatus;
  media?: Promise<Media>;
  /** Why its media could not be made from its input (an image that is no picture): the job fails, as a model's would. */
  unmakeable?: string;
}

export type SavedJob = Omit<Job, 'status' | 'media' | 'unmakeable'> & { cancelled: boolean };
