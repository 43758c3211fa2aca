import type { Receipt, TaskIdentity } from '../../main/domain/ports.ts';
import type { TaskStore } from '../../main/store/port.ts';

/** The identity a receipt names its task by, as the task's row records it (see Receipt.task). */
export async function identityOf(tasks: Pick<TaskStore, 'get'>, taskId: number): Promise<TaskIdentity> {
  const task = await tasks.get(taskId);
  if (!task) throw new Error(`no task ${taskId} to name in a receipt`);
  return { inputHash: task.inputHash, createdAt: task.createdAt };
}

/** A receipt of `database` for task `taskId` as it is now, as a worker of that database journals one. */
export async function receiptOf(tasks: Pick<TaskStore, 'get'>, database: string, taskId: number, idempotencyKey: string, requestId: string): Promise<Receipt> {
  return { database, taskId, task: await identityOf(tasks, taskId), idempotencyKey, requestId, handle: null, at: 1 };
}
