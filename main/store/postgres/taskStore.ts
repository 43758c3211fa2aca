import type { TaskStore } from '../port.ts';
import type { Sql } from './sql.ts';
import * as boundary from './taskBoundary.ts';
import * as completion from './taskCompletion.ts';
import * as leases from './taskLeases.ts';
import * as queue from './taskQueue.ts';
import * as receipts from './taskReceipts.ts';
import * as recovery from './taskRecovery.ts';
import * as spend from './taskSpend.ts';
import * as views from './taskViews.ts';
import * as bills from './taskBills.ts';
import { TaskTable } from './taskTable.ts';

/**
 * All SQL for the task table in PostgreSQL, shared by several machines. Each public method is one transaction:
 * one statement where it can be (an update and its event written together), several in `sql.tx` otherwise.
 * `machine` names this host on the files it saves.
 *
 * The statements live in the modules beside this one, one concern each; what they share is in taskTable.ts.
 */
export class PostgresTaskStore implements TaskStore {
  private readonly table: TaskTable;

  constructor(sql: Sql, machine?: string, machineId?: string) {
    this.table = new TaskTable(sql, machine, machineId ?? null);
  }

  onClaimable(listener: () => void): () => void {
    return this.table.onClaimable(listener);
  }

  // ---- The queue: enqueue, history, a cancel and its dependents (taskQueue.ts).

  enqueue(...args: Parameters<TaskStore['enqueue']>) {
    return queue.enqueue(this.table, ...args);
  }

  get(...args: Parameters<TaskStore['get']>) {
    return queue.get(this.table, ...args);
  }

  list(...args: Parameters<TaskStore['list']>) {
    return queue.list(this.table, ...args);
  }

  events(...args: Parameters<TaskStore['events']>) {
    return queue.events(this.table, ...args);
  }

  note(...args: Parameters<TaskStore['note']>) {
    return queue.note(this.table, ...args);
  }

  hasOutstandingWork(...args: Parameters<TaskStore['hasOutstandingWork']>) {
    return queue.hasOutstandingWork(this.table, ...args);
  }

  withSameInput(...args: Parameters<TaskStore['withSameInput']>) {
    return queue.withSameInput(this.table, ...args);
  }

  cancel(...args: Parameters<TaskStore['cancel']>) {
    return queue.cancel(this.table, ...args);
  }

  notSentAfterCancel(...args: Parameters<TaskStore['notSentAfterCancel']>) {
    return queue.notSentAfterCancel(this.table, ...args);
  }

  cancelDependentsOf(...args: Parameters<TaskStore['cancelDependentsOf']>) {
    return queue.cancelDependentsOf(this.table, ...args);
  }

  followAfterCancel(...args: Parameters<TaskStore['followAfterCancel']>) {
    return queue.followAfterCancel(this.table, ...args);
  }

  settleFollow(...args: Parameters<TaskStore['settleFollow']>) {
    return queue.settleFollow(this.table, ...args);
  }

  unfollowedAfterCancel(...args: Parameters<TaskStore['unfollowedAfterCancel']>) {
    return queue.unfollowedAfterCancel(this.table, ...args);
  }

  pendingDependents(...args: Parameters<TaskStore['pendingDependents']>) {
    return queue.pendingDependents(this.table, ...args);
  }

  related(...args: Parameters<TaskStore['related']>) {
    return queue.related(this.table, ...args);
  }

  // ---- Claims and leases (taskLeases.ts).

  claim(...args: Parameters<TaskStore['claim']>) {
    return leases.claim(this.table, ...args);
  }

  saveProgress(...args: Parameters<TaskStore['saveProgress']>) {
    return leases.saveProgress(this.table, ...args);
  }

  setNote(...args: Parameters<TaskStore['setNote']>) {
    return leases.setNote(this.table, ...args);
  }

  requeue(...args: Parameters<TaskStore['requeue']>) {
    return leases.requeue(this.table, ...args);
  }

  parkUnknown(...args: Parameters<TaskStore['parkUnknown']>) {
    return leases.parkUnknown(this.table, ...args);
  }

  renewLeases(...args: Parameters<TaskStore['renewLeases']>) {
    return leases.renewLeases(this.table, ...args);
  }

  renewMarked(...args: Parameters<TaskStore['renewMarked']>) {
    return leases.renewMarked(this.table, ...args);
  }

  expireLease(...args: Parameters<TaskStore['expireLease']>) {
    return leases.expireLease(this.table, ...args);
  }

  retryLater(...args: Parameters<TaskStore['retryLater']>) {
    return leases.retryLater(this.table, ...args);
  }

  // ---- The boundary write and request ids (taskBoundary.ts).

  markSubmitStarted(...args: Parameters<TaskStore['markSubmitStarted']>) {
    return boundary.markSubmitStarted(this.table, ...args);
  }

  recordSubmitted(...args: Parameters<TaskStore['recordSubmitted']>) {
    return boundary.recordSubmitted(this.table, ...args);
  }

  noteRequestId(...args: Parameters<TaskStore['noteRequestId']>) {
    return boundary.noteRequestId(this.table, ...args);
  }

  setEstimate(...args: Parameters<TaskStore['setEstimate']>) {
    return boundary.setEstimate(this.table, ...args);
  }

  requestHolder(...args: Parameters<TaskStore['requestHolder']>) {
    return boundary.requestHolder(this.table, ...args);
  }

  requestIdsInUse(...args: Parameters<TaskStore['requestIdsInUse']>) {
    return boundary.requestIdsInUse(this.table, ...args);
  }

  // ---- Request ids from the receipt journal (taskReceipts.ts).

  applyReceipt(...args: Parameters<TaskStore['applyReceipt']>) {
    return receipts.applyReceipt(this.table, ...args);
  }

  noteRivalReceipts(...args: Parameters<TaskStore['noteRivalReceipts']>) {
    return receipts.noteRivalReceipts(this.table, ...args);
  }

  receiptSettled(...args: Parameters<TaskStore['receiptSettled']>) {
    return receipts.receiptSettled(this.table, ...args);
  }

  // ---- Completion and outputs (taskCompletion.ts).

  complete(...args: Parameters<TaskStore['complete']>) {
    return completion.complete(this.table, ...args);
  }

  completeAttempt(...args: Parameters<TaskStore['completeAttempt']>) {
    return completion.completeAttempt(this.table, ...args);
  }

  linkLateOutputs(...args: Parameters<TaskStore['linkLateOutputs']>) {
    return completion.linkLateOutputs(this.table, ...args);
  }

  outputs(...args: Parameters<TaskStore['outputs']>) {
    return completion.outputs(this.table, ...args);
  }

  fail(...args: Parameters<TaskStore['fail']>) {
    return completion.fail(this.table, ...args);
  }

  forgetOutputs(...args: Parameters<TaskStore['forgetOutputs']>) {
    return completion.forgetOutputs(this.table, ...args);
  }

  // ---- Recovery: expired leases, unknown outcomes, lookups, a person's decisions (taskRecovery.ts).

  expiredLeases(...args: Parameters<TaskStore['expiredLeases']>) {
    return recovery.expiredLeases(this.table, ...args);
  }

  expireLeasesOf(...args: Parameters<TaskStore['expireLeasesOf']>) {
    return recovery.expireLeasesOf(this.table, ...args);
  }

  recoverRequeueAll(...args: Parameters<TaskStore['recoverRequeueAll']>) {
    return recovery.recoverRequeueAll(this.table, ...args);
  }

  recoverParkAll(...args: Parameters<TaskStore['recoverParkAll']>) {
    return recovery.recoverParkAll(this.table, ...args);
  }

  dueForLookup(...args: Parameters<TaskStore['dueForLookup']>) {
    return recovery.dueForLookup(this.table, ...args);
  }

  unknownProviders(...args: Parameters<TaskStore['unknownProviders']>) {
    return recovery.unknownProviders(this.table, ...args);
  }

  lookupNoted(...args: Parameters<TaskStore['lookupNoted']>) {
    return recovery.lookupNoted(this.table, ...args);
  }

  sameInputOverlapping(...args: Parameters<TaskStore['sameInputOverlapping']>) {
    return recovery.sameInputOverlapping(this.table, ...args);
  }

  unendedBefore(...args: Parameters<TaskStore['unendedBefore']>) {
    return recovery.unendedBefore(this.table, ...args);
  }

  adoptFound(...args: Parameters<TaskStore['adoptFound']>) {
    return recovery.adoptFound(this.table, ...args);
  }

  foundAfterCancel(...args: Parameters<TaskStore['foundAfterCancel']>) {
    return recovery.foundAfterCancel(this.table, ...args);
  }

  adopt(...args: Parameters<TaskStore['adopt']>) {
    return recovery.adopt(this.table, ...args);
  }

  resubmit(...args: Parameters<TaskStore['resubmit']>) {
    return recovery.resubmit(this.table, ...args);
  }

  giveUp(...args: Parameters<TaskStore['giveUp']>) {
    return recovery.giveUp(this.table, ...args);
  }

  // ---- Spend (taskSpend.ts).

  spend(...args: Parameters<TaskStore['spend']>) {
    return spend.spend(this.table, ...args);
  }

  spendByDay(...args: Parameters<TaskStore['spendByDay']>) {
    return spend.spendByDay(this.table, ...args);
  }

  spendByModel(...args: Parameters<TaskStore['spendByModel']>) {
    return spend.spendByModel(this.table, ...args);
  }

  spendInOtherCurrencies(...args: Parameters<TaskStore['spendInOtherCurrencies']>) {
    return spend.spendInOtherCurrencies(this.table, ...args);
  }

  spendByModelAll(...args: Parameters<TaskStore['spendByModelAll']>) {
    return spend.spendByModelAll(this.table, ...args);
  }

  billedRatios() {
    return spend.billedRatios(this.table);
  }

  spendByDayAll(...args: Parameters<TaskStore['spendByDayAll']>) {
    return spend.spendByDayAll(this.table, ...args);
  }
  spendByProvider() {
    return spend.spendByProvider(this.table);
  }

  // ---- Views and the library (taskViews.ts).

  page(...args: Parameters<TaskStore['page']>) {
    return views.page(this.table, ...args);
  }

  recentDurations(...args: Parameters<TaskStore['recentDurations']>) {
    return views.recentDurations(this.table, ...args);
  }

  recentBilledSeconds(...args: Parameters<TaskStore['recentBilledSeconds']>) {
    return views.recentBilledSeconds(this.table, ...args);
  }

  sentSince(...args: Parameters<TaskStore['sentSince']>) {
    return bills.sentSince(this.table, ...args);
  }

  recordBill(...args: Parameters<TaskStore['recordBill']>) {
    return bills.recordBill(this.table, ...args);
  }

  noteNoBill(...args: Parameters<TaskStore['noteNoBill']>) {
    return bills.noteNoBill(this.table, ...args);
  }

  recentRenderDurations(...args: Parameters<TaskStore['recentRenderDurations']>) {
    return views.recentRenderDurations(this.table, ...args);
  }

  claimedAt(...args: Parameters<TaskStore['claimedAt']>) {
    return views.claimedAt(this.table, ...args);
  }

  counts(...args: Parameters<TaskStore['counts']>) {
    return views.counts(this.table, ...args);
  }

  library(...args: Parameters<TaskStore['library']>) {
    return views.library(this.table, ...args);
  }

  libraryProviders(...args: Parameters<TaskStore['libraryProviders']>) {
    return views.libraryProviders(this.table, ...args);
  }

  scenesOf(...args: Parameters<TaskStore['scenesOf']>) {
    return views.scenesOf(this.table, ...args);
  }
}
