import type { Project } from '../domain/project.ts';
import type { Storyboard } from '../domain/storyboard.ts';
import type { TakeRecord } from '../domain/takeRecord.ts';
import type { Receipt, SavedOutput } from '../domain/ports.ts';
import type { BilledUnits, Charged, Kind, NewTask, RemoteRef, ReportedUnit, Status, Task, TaskEvent, TaskOutput } from '../domain/tasks/model.ts';

/**
 * The storage port. Two stores implement it: SQLite (embedded, the default) and PostgreSQL (team mode, several
 * machines on one task table). It is asynchronous so that a networked database fits; every method that
 * writes is one transaction and has reached the database (and, for SQLite, the disk) when its promise resolves.
 */

/** Spend of one provider's model within a project; amounts in micro-units. */
export interface ModelSpend {
  provider: string;
  model: string;
  tasks: number;
  /** Money or credits the provider reported as charged (see domain/costBasis.ts). */
  billed: number;
  /** What the provider reported it bills by (images, seconds, tokens), priced at the catalogue's price. */
  countedFromUsage: number;
  /** What the requests billed or counted from usage had been estimated at. */
  estimatedForBilled: number;
  billedUnestimated: number;
  estimatedOnly: number;
  possiblyCharged: number;
  /** Enqueued and not sent yet, at its estimate. */
  queued: number;
}

/** Billed against estimated, over every run of one provider's model that has both (see forecast.ts); micro-units. */
export interface BilledRatio {
  provider: string;
  model: string;
  currency: string;
  runs: number;
  billed: number;
  estimated: number;
}

export interface LibraryFilter {
  projectId?: number | null;
  kind?: Kind | null;
  provider?: string | null;
  from?: number | null;
  to?: number | null;
  search?: string | null;
}

export interface CompletedResult {
  outputs: SavedOutput[];
  costActual: number | null;
  costSource?: string | null;
  /** The credits or seconds costActual was billed in, where the provider reported them. */
  costUnits?: BilledUnits | null;
  /** What the provider reported that costActual comes from (money, credits, or a count priced here). */
  costReported?: ReportedUnit | null;
  requestId?: string | null;
}

/** What a failed request cost, where the provider reported something for it; `reported` absent in callers that know none. */
export interface FailCost {
  amount: number;
  source: string;
  reported?: ReportedUnit;
  units?: BilledUnits;
}

/**
 * Who writes and when. `now` is the caller's clock; a store shared by several machines takes lease times from
 * its own clock instead, so a machine whose clock runs ahead cannot take a lease early.
 */
export interface Lease {
  owner: string;
  now: number;
  /**
   * The idempotency key of the attempt the writer marked, on its writes after the boundary mark: they change the row
   * only while it is still at that attempt. A person's resubmit starts another, and a claim after it may come from
   * the very same process (the same owner), whose stalled executor must then neither send nor write its old attempt.
   */
  attempt?: string;
}

/**
 * What a boundary write did: marked the row, or why it did not. Only 'budget' means the request would take the
 * project past its budget (the row is then as the write found it, still this owner's and unsent); 'lease' means
 * the row is no longer this owner's to send (lease lost, moved on, cancelled).
 */
export type BoundaryMark = { marked: Task } | { refused: 'budget'; task: Task } | { refused: 'lease' };

/** An input file put in a provider's storage for one attempt, named in the request by `url`. */
export interface InputUpload {
  provider: string;
  sha256: string;
  url: string;
}

/** Spend in one currency, in micro-units of `currency`. */
export interface CurrencySpend {
  currency: string;
  /** Accepted work's figures from what the providers reported: billed + countedFromUsage. */
  actual: number;
  billed: number;
  countedFromUsage: number;
  estimated: number;
  possiblyCharged: number;
  /** Enqueued work not sent yet, at its estimate: committed by a Generate, so a budget counts it. */
  queued: number;
}

/** A project's spend in its own currency (money of another currency is kept apart: CurrencySpend). */
export interface SpendRow extends CurrencySpend {
  projectId: number;
  project: string;
  budget: number | null;
  /** Tasks spent, possibly charged or enqueued whose price is unknown: in none of the figures above. */
  unpriced: number;
  /** The part of actual, estimated, possibly charged and queued that is the simulator's made-up money. */
  simulated: number;
}

export interface DaySpend {
  day: string;
  provider: string;
  actual: number;
  billed: number;
  countedFromUsage: number;
  estimated: number;
  possiblyCharged: number;
}

export interface TaskStore {
  /**
   * Calls `listener` when a write of this process may have left work to claim or a slot free. It may be called
   * inside the write's transaction, so it must only schedule its work for later. Returns the unsubscribe.
   */
  onClaimable(listener: () => void): () => void;
  enqueue(task: NewTask, now: number): Promise<Task>;
  get(id: number): Promise<Task | undefined>;
  list(filter?: { projectId?: number; status?: Status }): Promise<Task[]>;
  events(taskId: number): Promise<TaskEvent[]>;
  /**
   * One round trip per kind, holding nothing across a wait on the caller; a SUBMITTED row stays SUBMITTED;
   * `concurrency` counts every owner's leased rows.
   */
  claim(kind: Kind, concurrency: number, leaseMs: number, lease: Lease, reclaimExpired?: boolean): Promise<Task[]>;
  /**
   * The boundary write before a paid request leaves: fenced by the lease and checked against the budget. The files
   * uploaded for this attempt are kept in its event, in the same write, so a lookup rebuilds the request it sent.
   */
  markSubmitStarted(id: number, idempotencyKey: string, leaseMs: number, lease: Lease, uploads?: readonly InputUpload[]): Promise<BoundaryMark>;
  /** `remote.alias`: the request's other name, where the answer gave one (see SubmitResult.alias). */
  recordSubmitted(id: number, remote: Omit<RemoteRef, 'model'> & { alias?: string | null }, estimate: { cost: number; source: string } | null, lease: Lease): Promise<Task | undefined>;
  noteRequestId(id: number, requestId: string, lease: Lease): Promise<Task | undefined>;
  applyReceipt(receipt: Receipt, pollable: boolean, now: number): Promise<Task | undefined>;
  receiptSettled(receipt: Receipt): Promise<boolean>;
  /**
   * Receipts that name no task and give one attempt rival requests (see chooseReceipts): none is applied; the history of
   * a row still at that attempt with no request id names each request once, for the person who decides (reconcile).
   */
  noteRivalReceipts(receipts: readonly Receipt[], now: number): Promise<void>;
  setEstimate(id: number, cost: number, source: string, currency: string, lease: Lease): Promise<boolean>;
  saveProgress(id: number, progress: number | null, leaseMs: number, lease: Lease): Promise<boolean>;
  complete(id: number, out: CompletedResult, lease: Lease): Promise<Task | undefined>;
  completeAttempt(id: number, idempotencyKey: string | null, out: CompletedResult, now: number): Promise<Task | undefined>;
  /**
   * Links to a task that already SUCCEEDED at attempt `idempotencyKey` the files of that attempt's result not linked
   * yet (a worker that stalled while saving placed them after another completed the row from what was on disk), with
   * `reason` in the same write; returns how many it linked (0 when all were linked already). A row of another attempt,
   * not completed, or whose result the person deleted is untouched: null.
   */
  linkLateOutputs(id: number, idempotencyKey: string | null, outputs: readonly SavedOutput[], reason: string, now: number): Promise<number | null>;
  outputs(taskId: number): Promise<TaskOutput[]>;
  setNote(id: number, note: string | null, lease: Lease): Promise<boolean>;
  fail(id: number, error: string, charged: Charged, lease: Lease, cost?: FailCost | null): Promise<Task | undefined>;
  requeue(id: number, nextAttemptAt: number, reason: string, lease: Lease, detail?: unknown): Promise<Task | undefined>;
  parkUnknown(id: number, reason: string, lease: Lease, from?: 'RUNNING' | 'SUBMITTED'): Promise<Task | undefined>;
  note(id: number, reason: string, detail: unknown, now: number): Promise<void>;
  renewLeases(ids: readonly number[], leaseMs: number, lease: Lease): Promise<Set<number>>;
  /** The renewal before a send: only a row still RUNNING, this owner's, at the attempt `lease.attempt` marked. */
  renewMarked(id: number, leaseMs: number, lease: Lease & { attempt: string }): Promise<boolean>;
  expiredLeases(now: number): Promise<Task[]>;
  expireLease(id: number, lease: Lease): Promise<boolean>;
  /** `detail` goes with `notBefore` into the event, for the engine to count its rounds by. */
  retryLater(id: number, notBefore: number, note: string, lease: Lease, detail?: Record<string, unknown>): Promise<boolean>;
  expireLeasesOf(owners: string[], now: number): Promise<number>;
  /**
   * The recovery sweep's writes, each over many rows at once. A row changes only while it is still exactly as the
   * sweep saw it (the same lease owner and expiry, still RUNNING, and for a requeue nothing sent) and its lease has
   * run out by the store's clock; each changed row gets its event. Returns the rows changed.
   */
  recoverRequeueAll(tasks: readonly Task[], now: number, reason: string): Promise<Task[]>;
  recoverParkAll(rows: readonly { task: Task; reason: string }[], now: number): Promise<Task[]>;
  hasOutstandingWork(): Promise<boolean>;
  spend(projectId?: number | null): Promise<SpendRow[]>;
  withSameInput(projectId: number, hash: string): Promise<Task[]>;
  /** The task other than `exceptTask` that holds, at its provider, a request named by any of `ids` (its id or another name of it). */
  requestHolder(exceptTask: number, ids: readonly string[]): Promise<Task | undefined>;
  requestIdsInUse(provider: string, ids: readonly string[], exceptTask: number): Promise<Set<string>>;
  spendByDay(projectId: number): Promise<DaySpend[]>;
  spendByModel(projectId: number): Promise<ModelSpend[]>;
  /** A project's spend in currencies other than its own, per currency: never added to its figures (see spend). */
  spendInOtherCurrencies(projectId: number): Promise<CurrencySpend[]>;
  page(projectId: number, offset: number, limit: number): Promise<{ total: number; tasks: Task[] }>;
  recentDurations(provider: string, model: string, limit?: number): Promise<number[]>;
  recentRenderDurations(provider: string, model: string, limit?: number): Promise<number[]>;
  /** A provider's requests whose send was marked at or after `since` (ms), every project's. */
  sentSince(provider: string, since: number): Promise<Task[]>;
  /** Sets the billed figure of a task that has none; false (nothing written) where one is recorded already. */
  recordBill(id: number, amount: number, source: string): Promise<boolean>;
  /** Says in the billing source of a task with no billed figure why its estimate stands. */
  noteNoBill(id: number, why: string): Promise<boolean>;
  /** The seconds the provider billed this model's latest runs by, newest first (see BilledUnits). */
  recentBilledSeconds(provider: string, model: string, limit?: number): Promise<number[]>;
  claimedAt(ids: readonly number[]): Promise<Map<number, number>>;
  counts(): Promise<{ projectId: number; status: Status; n: number }[]>;
  /**
   * Takes up to `limit` lookups due of unknown outcomes: each taken moves its task's next lookup `intervalMs` on, for
   * every process and machine (by the database's clock in team mode), so one is made per task per interval.
   */
  dueForLookup(providers: readonly string[], maxTries: number, intervalMs: number, now: number, limit: number): Promise<{ task: Task; tries: number }[]>;
  unknownProviders(): Promise<string[]>;
  lookupNoted(id: number, attempt: string | null, reason: string, detail: { lookup: number; verdict: 'again' | 'ask' } & Record<string, unknown>, now: number): Promise<void>;
  sameInputOverlapping(task: Pick<Task, 'id' | 'inputHash'>, from: number, to: number): Promise<number[]>;
  /**
   * This provider's tasks other than `exceptTask` whose send started before `sentAt` and that had not been heard
   * to end by then: still being sent, submitted or unknown, or ended (succeeded, failed, cancelled) after it.
   */
  unendedBefore(provider: string, sentAt: number, exceptTask: number): Promise<Task[]>;
  /**
   * Adoptions give the task `requestId` only while no other task holds it by any of the names `aliases` the provider
   * gives it (checked in the same write); the other name is kept on the row beside the id, so it is recognised later too.
   */
  adoptFound(id: number, attempt: string | null, requestId: string, why: string, evidence: Record<string, unknown>, now: number, aliases?: readonly string[]): Promise<Task | undefined>;
  /**
   * A lookup found the request a task cancelled while it was being sent had sent (see adoptFound, under the same
   * conditions): the row keeps it, still cancelled, for the engine to treat as a request named after the cancel.
   */
  foundAfterCancel(id: number, attempt: string | null, requestId: string, why: string, evidence: Record<string, unknown>, now: number, aliases?: readonly string[]): Promise<Task | undefined>;
  adopt(id: number, requestId: string, now: number, aliases?: readonly string[]): Promise<Task | undefined>;
  /** `detail` goes on the decision's event (what the person was told and chose anyway). */
  resubmit(id: number, now: number, detail?: Record<string, unknown>): Promise<Task | undefined>;
  giveUp(id: number, now: number): Promise<Task | undefined>;
  /** Cancels a task that has not finished, and the pending work that needs it ("cancelled with task N"). */
  /** `unbilled`: the provider stopped the request where it documents none is charged (fal's queue), so it ends not charged. */
  cancel(id: number, now: number, unbilled?: boolean): Promise<Task | undefined>;
  /** The worker of attempt `attempt` of a cancelled task saw the cancel before sending anything: not charged. */
  notSentAfterCancel(id: number, attempt: string, now: number): Promise<Task | undefined>;
  /** The pending work that needs this task, cancelled with it whatever becomes of the task itself (see cancelTask). */
  cancelDependentsOf(id: number, now: number): Promise<void>;
  /**
   * A cancelled task whose request `requestId` arrived after the cancel: it may be paid, so it is SUBMITTED again,
   * possibly charged, to be polled and collected, no sooner than `notBefore` (a provider still being asked to stop it answers
   * first; see settleFollow); `reason` goes on the row and in the event, `kept` is what the task says if its result
   * is collected (see afterCancelDetail). Its dependents stay cancelled. Undefined when the row is not that.
   */
  followAfterCancel(id: number, requestId: string, reason: string, now: number, notBefore?: number, kept?: string): Promise<Task | undefined>;
  /**
   * The provider's answer to the cancel of a followed request (see followAfterCancel), while no worker holds it:
   * `stopped` cancels the task again, else it is polled now; `charged`, what the answer says of the charge (null: it
   * says nothing). Undefined when the row is not that.
   */
  settleFollow(id: number, requestId: string, stopped: boolean, charged: Charged | null, reason: string, now: number, kept?: string): Promise<Task | undefined>;
  /** Cancelled tasks holding a request named after the cancel that nothing followed or settled since (a crash between). */
  unfollowedAfterCancel(): Promise<Task[]>;
  pendingDependents(id: number): Promise<Task[]>;
  related(id: number): Promise<{ dependsOn: Task[]; dependents: Task[] }>;
  library(filter: LibraryFilter, offset: number, limit: number): Promise<{ total: number; items: { task: Task; project: string; files: number }[] }>;
  libraryProviders(): Promise<string[]>;
  scenesOf(ids: readonly number[]): Promise<Map<number, string | null>>;
  forgetOutputs(id: number, reason: string, files: string[], now: number): Promise<Task | undefined>;
  spendByModelAll(): Promise<(ModelSpend & { currency: string })[]>;
  /** Per provider, model and currency: the runs billed with an estimate beside the bill, on this store (a team's on a team database). */
  billedRatios(): Promise<BilledRatio[]>;
  spendByDayAll(): Promise<(DaySpend & { project: string; currency: string })[]>;
  /** Spend of every project per provider, for the project list. */
  spendByProvider(): Promise<(Omit<DaySpend, 'day'> & { project: string })[]>;
}

export interface ProjectStore {
  byName(name: string): Promise<Project | undefined>;
  /** Projects are named by people; the first task in a new name creates it. */
  ensure(name: string, now: number): Promise<Project>;
  /** Inside a transaction: holds the project until it ends, so two Generates of one project (on any machine) judge and enqueue one after the other. */
  lock(id: number): Promise<Project | undefined>;
  setBudget(id: number, budget: number | null): Promise<void>;
  list(): Promise<Project[]>;
}

export interface StoryboardStore {
  get(projectId: number): Promise<Storyboard | undefined>;
  raw(projectId: number): Promise<unknown>;
  /** The revision of the stored storyboard (one more on every save), or 0 when there is none. */
  revision(projectId: number): Promise<number>;
  /**
   * Saves and returns the new revision. With `from` (the revision the board was made from, 0 for none), the save
   * happens only if the stored revision is still that one, else StaleStoryboard and nothing is written; without it
   * (a change the studio makes itself inside a transaction that read the board, such as a picked take) it always does.
   */
  save(projectId: number, board: Storyboard, now: number, from?: number): Promise<number>;
}

export interface TakeStore {
  list(projectId: number, scene?: string): Promise<TakeRecord[]>;
  picks(projectId: number): Promise<Map<string, number>>;
  add(take: Omit<TakeRecord, 'take'>): Promise<TakeRecord>;
  pick(projectId: number, scene: string, take: number, now: number): Promise<void>;
}

export interface OwnerStore {
  /**
   * `hostname` is the machine's name, a label; `machine` its id, kept in its data folder; `boot` the running
   * system its pid belongs to (see OwnerIdentity).
   */
  register(owner: { id: string; hostname: string; machine: string; boot: string | null; pid: number }, now: number): Promise<void>;
  /**
   * The processes registered by the machine with this id in this same boot: the only ones whose pids mean anything
   * to it (a copied data folder carries the id to another computer, never the boot).
   */
  onMachine(machine: string, boot: string): Promise<{ id: string; pid: number }[]>;
  remove(id: string): Promise<void>;
  /**
   * This machine's clock (`local`) less the database's, in ms, measured now, and kept on the row of `owner` when
   * given (for `studio team status`). Null where the store has no clock but this machine's (the embedded one).
   */
  checkClock(local: () => number, owner?: string): Promise<number | null>;
}

export interface Stores {
  tasks: TaskStore;
  projects: ProjectStore;
  storyboards: StoryboardStore;
  takes: TakeStore;
  owners: OwnerStore;
}

/** What a page needs to know that something changed: read every so often by the host. */
export interface ChangeProbe {
  /** `mark` differs after any write committed since the last read, by any process; `needsDecision` counts unknown outcomes. */
  read(): Promise<{ mark: string; needsDecision: number }>;
  close(): Promise<void>;
}

export interface Store extends Stores {
  readonly kind: 'sqlite' | 'postgres';
  /** Where the data is, for messages: the database file, or the team database's address without its password. */
  readonly where: string;
  /**
   * This database's own folder in a media folder it may share with other databases (whose task ids are numbered
   * apart from its own): the team's, or one chosen at random for an embedded database.
   */
  readonly mediaSpace: string;
  /**
   * This database's own id, drawn at random when it was created (or brought up to the version that keeps one). Receipt
   * journals and idempotency keys name it, so nothing of another database sharing the data folder is ever applied here.
   */
  readonly databaseId: string;
  /**
   * The ids and media spaces this database had before it was copied (a data folder copied, a backup restored beside
   * its original): receipts naming an earlier id are its own, and results it saved then are in the earlier spaces.
   * Empty for a database never copied, and for a team database.
   */
  readonly earlier: { databaseIds: readonly string[]; spaces: readonly string[] };
  /**
   * Runs `fn` as one transaction over the stores it is given. Until it ends, no other write of this process
   * reaches the database, so a judgement made inside it still holds when it commits.
   */
  transaction<T>(fn: (tx: Stores) => Promise<T>): Promise<T>;
  /** Why the database can no longer be used as opened (an SQLite file deleted or replaced), or null. */
  moved(): string | null;
  /** How long a write waits for another program's lock before it gives up (the default when absent). */
  waitForLocks(ms?: number): void;
  /** A probe of changes, on a connection of its own where the store needs one to see its own process's writes. */
  watch(): ChangeProbe;
  close(): Promise<void>;
}
