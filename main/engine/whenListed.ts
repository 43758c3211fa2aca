import type { ProviderAdapter } from '../providers/port.ts';
import type { Task } from '../domain/tasks/model.ts';
import type { TaskStore } from '../store/port.ts';
import { learnDurations } from './durations.ts';
import { listedBy, longestRun, type Ahead, type ListedBy } from './listedBy.ts';

export type ListedRepo = Pick<TaskStore, 'recentDurations' | 'unendedBefore'>;

/** Ends the studio hears from the provider itself: the request ran out (or was stopped) there by then. */
const HEARD_ENDED = new Set<Task['status']>(['SUCCEEDED', 'FAILED', 'CANCELLED']);

/**
 * For a provider whose listing shows a request only once it has ended: when a request of this task's send would
 * surely be listed, counting the requests to that provider this studio (every machine of a team: they share the
 * tasks) sent before it and had not seen end, each model's longest run, the provider's own retries and the queue
 * allowance. Null for any other provider.
 */
export async function whenListed(repo: ListedRepo, provider: ProviderAdapter, task: Task, queueMs: number, now: number): Promise<ListedBy | null> {
  if (!provider.capabilities.lookupListsOnceEnded) return null;
  const runs = provider.capabilities.runsAtMost ?? 1;
  const learned = new Map<string, Promise<ReturnType<typeof longestRun>>>();
  const run = (model: string) => {
    if (!learned.has(model)) {
      const stated = provider.capabilities.models.find((m) => m.id === model)?.runMs;
      learned.set(model, repo.recentDurations(task.provider, model).then((d) => longestRun(task.provider, stated, learnDurations(d))));
    }
    return learned.get(model)!;
  };
  const sentAt = task.submitStartedAt ?? task.createdAt;
  const ahead: Ahead[] = await Promise.all(
    (await repo.unendedBefore(task.provider, sentAt, task.id)).map(async (t) => ({
      sentAt: t.submitStartedAt!,
      endedAt: HEARD_ENDED.has(t.status) ? t.finishedAt : null,
      inFlight: t.status === 'SUBMITTED',
      lifeMs: runs * (await run(t.model)).ms,
    })),
  );
  return listedBy(task.provider, sentAt, await run(task.model), queueMs, { runs, ahead, now });
}
