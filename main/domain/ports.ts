import type { BilledUnits, Kind, ReportedUnit } from './tasks/model.ts';

/** The engine's view of time: wall-clock milliseconds for rows, a monotonic clock to notice system sleep. */
export interface Clock {
  now(): number;
  monotonic(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * False while now() may be off by a step of this machine's clock not yet measured (see DatabaseClock); a clock
   * without it is taken as settled.
   */
  settled?(): boolean;
}

export interface SavedOutput {
  path: string;
  sha256: string;
  bytes: number;
  contentType: string | null;
}

/** A task's whole result as saved on disk: written last, so its presence means every file is there. */
export interface ResultRecord {
  /** The attempt whose result this is: a record of an earlier attempt never completes a later one. */
  idempotencyKey: string | null;
  requestId: string | null;
  costActual: number | null;
  /** How costActual was reached; absent in records written before it was kept. */
  costSource?: string | null;
  /** The units costActual was billed in, as the provider reported them; absent in records written before they were kept. */
  costUnits?: BilledUnits | null;
  /** What the provider reported that costActual comes from; absent in records written before it was kept. */
  costReported?: ReportedUnit | null;
  /** Why no billed figure was recorded though the provider reported one (storableCost.ts), kept in the task's history. */
  costWhy?: string | null;
  outputs: SavedOutput[];
}

/** Paid bytes that are kept on disk but are not the media they should be: no retry can mend them. */
export class UnusableResult extends Error {}

/**
 * The folder results are saved in (the data folder, or the media folder) is gone, moved or deleted while the studio
 * runs: a download is left at the provider rather than recreate the folder at its old place.
 */
export class FolderGone extends Error {}

export interface TaskRef {
  projectId: number;
  id: number;
  /** The attempt in hand. */
  idempotencyKey: string | null;
}

export interface OutputTarget {
  projectId: number;
  taskId: number;
  /** The attempt: each attempt's files have names of their own, so a late one never overwrites another's. */
  idempotencyKey: string | null;
  kind: Kind;
  index: number;
  contentType: string | null;
}

/**
 * Where paid results land, crash-consistent: every file is written whole to a temporary file, synced and
 * renamed into its place, and the task's result record is written after the last file, so recovery can
 * complete a row from disk when the process died between saving a result and writing SUCCEEDED.
 */
export interface OutputStore {
  /**
   * A downloaded file: checked as media before it takes its place (UnusableResult when it is not). FolderGone, with
   * nothing written, when the folder files are saved in is gone.
   */
  save(target: OutputTarget, body: AsyncIterable<Uint8Array>): Promise<SavedOutput>;
  /**
   * Bytes already in hand and paid for, kept whatever the check says (UnusableResult when they are not the
   * media asked for). `rescue` puts them in the data folder's rescue place when the project's folder fails.
   */
  keep(target: OutputTarget, bytes: Uint8Array, rescue?: boolean): Promise<SavedOutput>;
  /** Writes bytes in hand to a synced temporary file beside their place, which `keep` then checks and places. */
  stage(target: OutputTarget, bytes: Uint8Array, rescue?: boolean): Promise<void>;
  /** Where and what `keep` will put, without writing: for a record written before the bytes. */
  plan(target: OutputTarget, bytes: Uint8Array, rescue?: boolean): SavedOutput;
  record(task: TaskRef, result: ResultRecord, rescue?: boolean): Promise<void>;
  /**
   * The result record of the task's current attempt with the files it names that are still whole (checked
   * by checksum), and how many are `missing` (a crash while bytes in hand were being placed); null if none.
   */
  find(task: TaskRef): Promise<(ResultRecord & { missing: number }) | null>;
  /** Whether the current attempt has a result record, without reading it (for the recovery sweep). */
  has(task: TaskRef): boolean;
}

/** A task as its row records it from its creation: its input's hash and when it was created. */
export interface TaskIdentity {
  inputHash: string;
  createdAt: number;
}

/** A request id the provider gave, journaled before the database is written, for a start-up to replay. */
export interface Receipt {
  /**
   * The id of the database whose task this is (see Store.databaseId); null in journals written before receipts named
   * their database, which are applied only on stricter evidence (see the stores' applyReceipt).
   */
  database: string | null;
  taskId: number;
  /**
   * Which step the task is: a restored backup numbers a new task with an id the journal names for another, and a data
   * folder copied by a version before copies drew ids of their own keeps its database's id, so database and task id alone do not tell one step from another. Null in
   * journals written before receipts named their task, which are read as those that name no database.
   */
  task: TaskIdentity | null;
  /** The attempt it belongs to: a receipt of an attempt a person has since replaced is never applied. */
  idempotencyKey: string;
  requestId: string;
  /** The request's other name, where its answer gave one (see SubmitResult.alias). */
  alias?: string | null;
  handle: Record<string, string> | null;
  at: number;
}

export interface ReceiptLog {
  /** Appends and syncs; throws if it cannot (the caller still writes the row). */
  append(receipt: Receipt): void;
  /** Every receipt of this database left by this and earlier processes, and those of journals that named no database. */
  all(): Receipt[];
  /**
   * Moves what the table already holds out of the journal into its archive: files of processes that are gone, and this
   * process's own when all is settled.
   */
  settle(isSettled: (receipt: Receipt) => boolean): void;
  /** The receipts settled in the last days (see ReceiptJournal), for a database restored from a backup older than they are. */
  archived(): Receipt[];
}
