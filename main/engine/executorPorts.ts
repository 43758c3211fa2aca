import type { PollOptions } from '../domain/engineOptions.ts';
import type { Clock, OutputStore, ReceiptLog } from '../domain/ports.ts';
import type { ProviderAdapter } from '../providers/port.ts';
import type { TaskStore } from '../store/port.ts';
import type { LearnedDurations } from './durations.ts';
import type { OwnPrices } from './estimator.ts';
import type { EngineHealth } from './health.ts';
import type { InputFiles } from './outputLocator.ts';

/** What the executor of a remote task is given: its ports and its options, shared with the modules it runs. */

export type ExecutorStore = Pick<
  TaskStore,
  | 'get'
  | 'setEstimate'
  | 'recentBilledSeconds'
  | 'markSubmitStarted'
  | 'recordSubmitted'
  | 'noteRequestId'
  | 'applyReceipt'
  | 'saveProgress'
  | 'setNote'
  | 'complete'
  | 'completeAttempt'
  | 'linkLateOutputs'
  | 'fail'
  | 'requeue'
  | 'parkUnknown'
  | 'note'
  | 'events'
  | 'retryLater'
  | 'renewMarked'
  | 'followAfterCancel'
  | 'settleFollow'
  | 'notSentAfterCancel'
>;

export interface ExecutorPorts {
  repo: ExecutorStore;
  provider: ProviderAdapter;
  clock: Clock;
  outputs: OutputStore;
  /** Where the results this task is made from are on this machine. */
  files: InputFiles;
  receipts: ReceiptLog;
  health: EngineHealth;
  random: () => number;
  log: (message: string) => void;
}

export interface ExecutorOptions {
  owner: string;
  /** The id of the database the tasks are in (Store.databaseId): in each idempotency key and receipt. */
  database: string;
  leaseMs: number;
  poll: PollOptions;
  /**
   * Aborted a few seconds into a stop: a send still waiting for its answer then is cut, and its row is left
   * as it is for the next start to recover (its receipt, if the provider named it; else an unknown outcome).
   */
  stopping?: AbortSignal;
  /** Prices the person set for models with no documented one (settings "prices"). */
  prices?: () => OwnPrices;
  /** This model's past durations on this machine, which time the polls of a provider with no status stream. */
  durations?: (provider: string, model: string) => Promise<LearnedDurations | null>;
}
