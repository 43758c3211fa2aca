import { describe, expect, it } from 'vitest';
import { openUnderTest } from './helpers/storeUnderTest.ts';
import { storeKinds } from './helpers/stores.ts';

describe.each(storeKinds())('the per-kind concurrency on the $kind store', (kind) => {
  it.skipIf(!kind.available)("counts this owner's running tasks whose lease ran out (a held lock stopped the heartbeat), so no third one starts", async () => {
    const { repo, projectId, as, pass } = await openUnderTest(kind);
    const enqueue = (prompt: string) => repo.enqueue({ projectId, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt } }, 1);
    for (const p of ['a', 'b', 'c']) await enqueue(p);
    expect(await repo.claim('image', 2, 1_000, as('me'))).toHaveLength(2);
    // Later than the leases' end: they are still running in this process.
    await pass(5_000);
    expect(await repo.claim('image', 2, 1_000, as('me'))).toHaveLength(0);
  });
});
