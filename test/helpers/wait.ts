/** Resolves once `predicate` holds, checking every 20 ms; rejects after `timeoutMs`. */
export async function until(predicate: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Resolves once every task listed has succeeded, checking every 100 ms; after `timeoutMs`, throws with where each one is. */
export async function untilAllSucceeded(tasks: { list(): Promise<{ kind: string; status: string; error: unknown }[]> }, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await tasks.list()).every((t) => t.status === 'SUCCEEDED')) {
    if (Date.now() > deadline) throw new Error(`not done: ${JSON.stringify((await tasks.list()).map((t) => [t.kind, t.status, t.error]))}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
