import type { ProviderAdapter } from '../providers/port.ts';
import type { Task } from '../tasks/model.ts';
import type { TaskStore } from '../store/port.ts';

/**
 * A request whose id arrived after the person cancelled its task (while it was being sent, or journaled
 * by a worker that died): the paid work is cancelled at the provider where it allows, and the history
 * says what was done. The task stays possibly charged either way.
 */
export async function cancelLateRequest(
  repo: Pick<TaskStore, 'note'>,
  provider: ProviderAdapter | undefined,
  task: Pick<Task, 'id' | 'model' | 'remoteHandle'>,
  requestId: string,
  now: () => number,
): Promise<void> {
  const name = provider?.id ?? 'the provider';
  if (!provider?.cancel) {
    await repo.note(task.id, `request ${requestId} arrived after the cancel; ${name} cannot cancel it, so it may be charged`, { requestId }, now());
    return;
  }
  let done: string;
  try {
    const outcome = await provider.cancel({ requestId, model: task.model, handle: task.remoteHandle });
    const said = { cancelled: 'it was cancelled', requested: 'it may be running already, so it may still finish', finished: 'it had already finished' }[outcome];
    done = `asked ${name} to cancel it: ${said} (it may still be charged)`;
  } catch (err) {
    done = `${name} could not be asked to cancel it (${(err as Error).message})`;
  }
  await repo.note(task.id, `request ${requestId} arrived after the cancel; ${done}`, { requestId }, now());
}
