import { describe, expect, it as base } from 'vitest';
import { imageTask } from './helpers/engine.ts';
import { LEASE, OWNER } from './helpers/executorUnderTest.ts';
import { openUnderTest, type StoreUnderTest } from './helpers/storeUnderTest.ts';
import { storeKinds } from './helpers/stores.ts';

/** A task priced at `cost` micro-units of `currency`, claimed and at its boundary mark: what the mark answers. */
async function sendOne(s: StoreUnderTest, prompt: string, cost: number, currency = 'USD') {
  const { id } = await s.repo.enqueue(imageTask(s.projectId, prompt, { estimate: { cost, source: 'catalogue', currency } }), s.clock.now());
  await s.repo.claim('image', 4, LEASE, s.as(OWNER));
  return { id, mark: await s.repo.markSubmitStarted(id, `key-${id}`, LEASE, s.as(OWNER)) };
}

const totalOf = (r: { actual: number; estimated: number; possiblyCharged: number }) => r.actual + r.estimated + r.possiblyCharged;

describe.each(storeKinds())('money counted alike by the $kind store', (kind) => {
  const it = base.skipIf(!kind.available);

  it('possibly charged is the same figure in the spend totals and in the engine budget check', async () => {
    const s = await openUnderTest(kind);
    // Sent, then its outcome unknown with a figure reported for it: possibly charged at that figure, not the estimate.
    const { id } = await sendOne(s, 'a fox', 5_000);
    await s.repo.fail(id, 'the connection reset after the request left', 'maybe', s.as(OWNER), { amount: 7_000, source: 'reported' });
    const [spent] = await s.repo.spend(s.projectId);
    expect(spent).toMatchObject({ actual: 0, estimated: 0, possiblyCharged: 7_000 });
    // The budget leaves exactly what the totals say is left: 3_000 fits, one micro-unit more does not.
    await s.store.projects.setBudget(s.projectId, totalOf(spent!) + 3_000);
    expect((await sendOne(s, 'a heron', 3_001)).mark).toMatchObject({ refused: 'budget' });
    expect((await sendOne(s, 'an owl', 3_000)).mark).toHaveProperty('marked');
  });

  it('money in another currency than the project is kept apart, and never sent under its budget', async () => {
    const s = await openUnderTest(kind);
    const { id } = await sendOne(s, 'a fox', 400_000, 'EUR');
    await s.repo.fail(id, 'the saved file was lost', 'yes', s.as(OWNER), { amount: 400_000, source: 'billed in EUR' });
    const [spent] = await s.repo.spend(s.projectId);
    expect(spent).toMatchObject({ currency: 'USD', actual: 0, estimated: 0, possiblyCharged: 0 });
    expect(await s.repo.spendByDay(s.projectId)).toEqual([]);
    expect(await s.repo.spendInOtherCurrencies(s.projectId)).toEqual([{ currency: 'EUR', actual: 400_000, billed: 0, countedFromUsage: 400_000, estimated: 0, possiblyCharged: 0, queued: 0 }]);

    await s.store.projects.setBudget(s.projectId, 1_000_000);
    // The EUR bill does not use up the USD budget, and a request priced in EUR is not sent under it.
    expect((await sendOne(s, 'a heron', 700_000)).mark).toHaveProperty('marked');
    expect((await sendOne(s, 'an owl', 1_000, 'EUR')).mark).toMatchObject({ refused: 'budget' });
  });
});
