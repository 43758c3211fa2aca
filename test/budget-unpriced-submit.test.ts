import { describe, expect, it } from 'vitest';
import { ManualClock, openTestStore } from './helpers/engine.ts';
import { tempDir } from './helpers/tmp.ts';

const LEASE = 60_000;

/**
 * A step of unknown price, confirmed by the person, is not counted as 0 against the budget at the boundary: it is
 * sent only while the budget has something left, since any paid request costs more than nothing.
 */
describe('the submit-time budget check and a step of unknown price', () => {
  async function setup(budgetMicros: number) {
    const clock = new ManualClock();
    const { store, repo, projectId } = await openTestStore(tempDir());
    await store.projects.setBudget(projectId, budgetMicros);
    const lease = () => ({ owner: 'w', now: clock.now() });
    // One request already accepted at its estimate of 0.04.
    const paid = (await repo.enqueue({ projectId, kind: 'image', provider: 'fake', model: 'fake-image', input: { prompt: 'paid' }, estimate: { cost: 40_000, source: 'test', currency: 'USD' } }, clock.now())).id;
    await repo.claim('image', 10, LEASE, lease());
    await repo.markSubmitStarted(paid, 'k-paid', LEASE, lease());
    await repo.recordSubmitted(paid, { requestId: 'r-paid', handle: null }, null, lease());
    const unpriced = (await repo.enqueue({ projectId, kind: 'speech', provider: 'fake', model: 'fake-speech', input: { text: 'hi' } }, clock.now())).id;
    await repo.claim('speech', 10, LEASE, lease());
    return { repo, unpriced, lease };
  }

  it('is not sent when the budget is used up', async () => {
    const { repo, unpriced, lease } = await setup(40_000);
    expect(await repo.markSubmitStarted(unpriced, 'k-1', LEASE, lease())).toMatchObject({ refused: 'budget', task: { id: unpriced } });
  });

  it('is sent while the budget has something left', async () => {
    const { repo, unpriced, lease } = await setup(40_001);
    expect(await repo.markSubmitStarted(unpriced, 'k-1', LEASE, lease())).toMatchObject({ marked: { id: unpriced } });
  });
});
