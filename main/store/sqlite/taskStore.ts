import { hostname } from 'node:os';
import type { Db } from '../../db/database.ts';
import type { TaskStore } from '../port.ts';
import { shareTable } from './taskTable.ts';
import { TaskQueue } from './taskQueue.ts';
import { TaskLeases } from './taskLeases.ts';
import { TaskBoundary } from './taskBoundary.ts';
import { TaskReceipts } from './taskReceipts.ts';
import { TaskCompletion } from './taskCompletion.ts';
import { TaskRecovery } from './taskRecovery.ts';
import { TaskSpend } from './taskSpend.ts';
import { TaskViews } from './taskViews.ts';
import { TaskBills } from './taskBills.ts';

/**
 * All SQL for the task table in SQLite, in parts by concern beside this file, each on the same connection and
 * statements (see TaskTable). Each public method is one transaction, committed when its promise resolves.
 * `machine` names this machine on the files it saves.
 */
export class SqliteTaskStore implements TaskStore {
  private readonly queue: TaskQueue;
  private readonly leases: TaskLeases;
  private readonly boundary: TaskBoundary;
  private readonly receipts: TaskReceipts;
  private readonly completion: TaskCompletion;
  private readonly recovery: TaskRecovery;
  private readonly spending: TaskSpend;
  private readonly views: TaskViews;
  private readonly bills: TaskBills;

  constructor(db: Db, machine: string = hostname(), machineId: string | null = null) {
    const shared = shareTable(db, machine, machineId);
    this.queue = new TaskQueue(shared);
    this.leases = new TaskLeases(shared);
    this.boundary = new TaskBoundary(shared);
    this.receipts = new TaskReceipts(shared);
    this.completion = new TaskCompletion(shared);
    this.recovery = new TaskRecovery(shared);
    this.spending = new TaskSpend(shared);
    this.views = new TaskViews(shared);
    this.bills = new TaskBills(shared);
  }

  // ---- The queue: enqueue, history and reads, a cancel, its dependents and what follows it (taskQueue.ts).

  onClaimable(...args: Parameters<TaskQueue['onClaimable']>) {
    return this.queue.onClaimable(...args);
  }
  enqueue(...args: Parameters<TaskQueue['enqueue']>) {
    return this.queue.enqueue(...args);
  }
  get(...args: Parameters<TaskQueue['get']>) {
    return this.queue.get(...args);
  }
  list(...args: Parameters<TaskQueue['list']>) {
    return this.queue.list(...args);
  }
  events(...args: Parameters<TaskQueue['events']>) {
    return this.queue.events(...args);
  }
  note(...args: Parameters<TaskQueue['note']>) {
    return this.queue.note(...args);
  }
  hasOutstandingWork(...args: Parameters<TaskQueue['hasOutstandingWork']>) {
    return this.queue.hasOutstandingWork(...args);
  }
  withSameInput(...args: Parameters<TaskQueue['withSameInput']>) {
    return this.queue.withSameInput(...args);
  }
  cancel(...args: Parameters<TaskQueue['cancel']>) {
    return this.queue.cancel(...args);
  }
  notSentAfterCancel(...args: Parameters<TaskQueue['notSentAfterCancel']>) {
    return this.queue.notSentAfterCancel(...args);
  }
  cancelDependentsOf(...args: Parameters<TaskQueue['cancelDependentsOf']>) {
    return this.queue.cancelDependentsOf(...args);
  }
  followAfterCancel(...args: Parameters<TaskQueue['followAfterCancel']>) {
    return this.queue.followAfterCancel(...args);
  }
  settleFollow(...args: Parameters<TaskQueue['settleFollow']>) {
    return this.queue.settleFollow(...args);
  }
  unfollowedAfterCancel(...args: Parameters<TaskQueue['unfollowedAfterCancel']>) {
    return this.queue.unfollowedAfterCancel(...args);
  }
  pendingDependents(...args: Parameters<TaskQueue['pendingDependents']>) {
    return this.queue.pendingDependents(...args);
  }
  related(...args: Parameters<TaskQueue['related']>) {
    return this.queue.related(...args);
  }

  // ---- Claims and leases (taskLeases.ts).

  claim(...args: Parameters<TaskLeases['claim']>) {
    return this.leases.claim(...args);
  }
  saveProgress(...args: Parameters<TaskLeases['saveProgress']>) {
    return this.leases.saveProgress(...args);
  }
  setNote(...args: Parameters<TaskLeases['setNote']>) {
    return this.leases.setNote(...args);
  }
  requeue(...args: Parameters<TaskLeases['requeue']>) {
    return this.leases.requeue(...args);
  }
  parkUnknown(...args: Parameters<TaskLeases['parkUnknown']>) {
    return this.leases.parkUnknown(...args);
  }
  renewLeases(...args: Parameters<TaskLeases['renewLeases']>) {
    return this.leases.renewLeases(...args);
  }
  renewMarked(...args: Parameters<TaskLeases['renewMarked']>) {
    return this.leases.renewMarked(...args);
  }
  expireLease(...args: Parameters<TaskLeases['expireLease']>) {
    return this.leases.expireLease(...args);
  }
  retryLater(...args: Parameters<TaskLeases['retryLater']>) {
    return this.leases.retryLater(...args);
  }

  // ---- The boundary write and request ids (taskBoundary.ts).

  markSubmitStarted(...args: Parameters<TaskBoundary['markSubmitStarted']>) {
    return this.boundary.markSubmitStarted(...args);
  }
  recordSubmitted(...args: Parameters<TaskBoundary['recordSubmitted']>) {
    return this.boundary.recordSubmitted(...args);
  }
  noteRequestId(...args: Parameters<TaskBoundary['noteRequestId']>) {
    return this.boundary.noteRequestId(...args);
  }
  setEstimate(...args: Parameters<TaskBoundary['setEstimate']>) {
    return this.boundary.setEstimate(...args);
  }
  requestHolder(...args: Parameters<TaskBoundary['requestHolder']>) {
    return this.boundary.requestHolder(...args);
  }
  requestIdsInUse(...args: Parameters<TaskBoundary['requestIdsInUse']>) {
    return this.boundary.requestIdsInUse(...args);
  }

  // ---- Receipts replayed from the journal (taskReceipts.ts).

  applyReceipt(...args: Parameters<TaskReceipts['applyReceipt']>) {
    return this.receipts.applyReceipt(...args);
  }
  noteRivalReceipts(...args: Parameters<TaskReceipts['noteRivalReceipts']>) {
    return this.receipts.noteRivalReceipts(...args);
  }
  receiptSettled(...args: Parameters<TaskReceipts['receiptSettled']>) {
    return this.receipts.receiptSettled(...args);
  }

  // ---- Completion and outputs (taskCompletion.ts).

  complete(...args: Parameters<TaskCompletion['complete']>) {
    return this.completion.complete(...args);
  }
  completeAttempt(...args: Parameters<TaskCompletion['completeAttempt']>) {
    return this.completion.completeAttempt(...args);
  }
  linkLateOutputs(...args: Parameters<TaskCompletion['linkLateOutputs']>) {
    return this.completion.linkLateOutputs(...args);
  }
  outputs(...args: Parameters<TaskCompletion['outputs']>) {
    return this.completion.outputs(...args);
  }
  fail(...args: Parameters<TaskCompletion['fail']>) {
    return this.completion.fail(...args);
  }
  forgetOutputs(...args: Parameters<TaskCompletion['forgetOutputs']>) {
    return this.completion.forgetOutputs(...args);
  }
  relativizePaths(...args: Parameters<TaskCompletion['relativizePaths']>) {
    return this.completion.relativizePaths(...args);
  }

  // ---- Recovery: expired leases, unknown outcomes, lookups, a person's decisions (taskRecovery.ts).

  expiredLeases(...args: Parameters<TaskRecovery['expiredLeases']>) {
    return this.recovery.expiredLeases(...args);
  }
  expireLeasesOf(...args: Parameters<TaskRecovery['expireLeasesOf']>) {
    return this.recovery.expireLeasesOf(...args);
  }
  recoverRequeueAll(...args: Parameters<TaskRecovery['recoverRequeueAll']>) {
    return this.recovery.recoverRequeueAll(...args);
  }
  recoverParkAll(...args: Parameters<TaskRecovery['recoverParkAll']>) {
    return this.recovery.recoverParkAll(...args);
  }
  dueForLookup(...args: Parameters<TaskRecovery['dueForLookup']>) {
    return this.recovery.dueForLookup(...args);
  }
  unknownProviders(...args: Parameters<TaskRecovery['unknownProviders']>) {
    return this.recovery.unknownProviders(...args);
  }
  lookupNoted(...args: Parameters<TaskRecovery['lookupNoted']>) {
    return this.recovery.lookupNoted(...args);
  }
  sameInputOverlapping(...args: Parameters<TaskRecovery['sameInputOverlapping']>) {
    return this.recovery.sameInputOverlapping(...args);
  }
  unendedBefore(...args: Parameters<TaskRecovery['unendedBefore']>) {
    return this.recovery.unendedBefore(...args);
  }
  adoptFound(...args: Parameters<TaskRecovery['adoptFound']>) {
    return this.recovery.adoptFound(...args);
  }
  foundAfterCancel(...args: Parameters<TaskRecovery['foundAfterCancel']>) {
    return this.recovery.foundAfterCancel(...args);
  }
  adopt(...args: Parameters<TaskRecovery['adopt']>) {
    return this.recovery.adopt(...args);
  }
  resubmit(...args: Parameters<TaskRecovery['resubmit']>) {
    return this.recovery.resubmit(...args);
  }
  giveUp(...args: Parameters<TaskRecovery['giveUp']>) {
    return this.recovery.giveUp(...args);
  }

  // ---- Spend (taskSpend.ts).

  spend(...args: Parameters<TaskSpend['spend']>) {
    return this.spending.spend(...args);
  }
  spendByDay(...args: Parameters<TaskSpend['spendByDay']>) {
    return this.spending.spendByDay(...args);
  }
  spendByModel(...args: Parameters<TaskSpend['spendByModel']>) {
    return this.spending.spendByModel(...args);
  }
  spendInOtherCurrencies(...args: Parameters<TaskSpend['spendInOtherCurrencies']>) {
    return this.spending.spendInOtherCurrencies(...args);
  }
  spendByModelAll(...args: Parameters<TaskSpend['spendByModelAll']>) {
    return this.spending.spendByModelAll(...args);
  }
  billedRatios() {
    return this.spending.billedRatios();
  }
  spendByDayAll(...args: Parameters<TaskSpend['spendByDayAll']>) {
    return this.spending.spendByDayAll(...args);
  }
  spendByProvider() {
    return this.spending.spendByProvider();
  }

  // ---- Pages, counts, durations and the library (taskViews.ts).

  page(...args: Parameters<TaskViews['page']>) {
    return this.views.page(...args);
  }
  recentDurations(...args: Parameters<TaskViews['recentDurations']>) {
    return this.views.recentDurations(...args);
  }
  recentBilledSeconds(...args: Parameters<TaskViews['recentBilledSeconds']>) {
    return this.views.recentBilledSeconds(...args);
  }

  // ---- Bills read after the fact from a provider's usage records (taskBills.ts).

  sentSince(...args: Parameters<TaskBills['sentSince']>) {
    return this.bills.sentSince(...args);
  }
  recordBill(...args: Parameters<TaskBills['recordBill']>) {
    return this.bills.recordBill(...args);
  }
  noteNoBill(...args: Parameters<TaskBills['noteNoBill']>) {
    return this.bills.noteNoBill(...args);
  }
  recentRenderDurations(...args: Parameters<TaskViews['recentRenderDurations']>) {
    return this.views.recentRenderDurations(...args);
  }
  claimedAt(...args: Parameters<TaskViews['claimedAt']>) {
    return this.views.claimedAt(...args);
  }
  counts(...args: Parameters<TaskViews['counts']>) {
    return this.views.counts(...args);
  }
  library(...args: Parameters<TaskViews['library']>) {
    return this.views.library(...args);
  }
  libraryProviders(...args: Parameters<TaskViews['libraryProviders']>) {
    return this.views.libraryProviders(...args);
  }
  scenesOf(...args: Parameters<TaskViews['scenesOf']>) {
    return this.views.scenesOf(...args);
  }
}
