/** What a pending task cancelled because of the task it needs says (its error, and the event's reason). */
export interface DependentWords {
  error: string;
  reason: string;
}

/** The task it needs ended without success (failed, or given up). */
export const didNotSucceed = (id: number): DependentWords => ({
  error: `task ${id}, which this one needs, did not succeed`,
  reason: 'a task it depends on did not succeed',
});

/**
 * The person cancelled the task it needs: true whatever that task's end (a request the provider finished anyway is
 * collected, and this one is still not bought).
 */
export const cancelledWith = (id: number): DependentWords => ({
  error: `cancelled with task ${id}, which this one needs`,
  reason: `cancelled with task ${id}`,
});
