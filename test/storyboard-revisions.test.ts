import { describe, expect, it } from 'vitest';
import { StaleStoryboard } from '../main/domain/storyboardRevision.ts';
import { parseStoryboard } from '../main/providers/storyboards.ts';
import { storeKinds } from './helpers/stores.ts';

const board = (prompt: string) => parseStoryboard({ scenes: [{ id: 'fox', imagePrompt: prompt, duration: 2 }] });

describe.each(storeKinds())('the $kind store: a storyboard save names the revision it was made from', ({ available, fresh, open }) => {
  it.skipIf(!available)('a fresh save is taken and counts one revision; a stale one is refused and changes nothing', async () => {
    const store = await open();
    const { id } = await store.projects.ensure('Fox', 1);
    expect(await store.storyboards.revision(id)).toBe(0);
    expect(await store.storyboards.save(id, board('first'), 10, 0)).toBe(1);
    expect(await store.storyboards.save(id, board('second'), 20, 1)).toBe(2);
    expect(await store.storyboards.revision(id)).toBe(2);

    // Made from revision 1 (another tab's), and from none: both older than what is stored.
    for (const from of [1, 0]) {
      const refused = await store.storyboards.save(id, board('stale'), 30, from).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(StaleStoryboard);
      expect(refused).toMatchObject({ from, current: 2 });
    }
    expect(await store.storyboards.revision(id)).toBe(2);
    expect((await store.storyboards.get(id))!.scenes[0]!.imagePrompt).toBe('second');

    // The studio's own change inside a transaction that read the board (a picked take) counts a revision too.
    expect(await store.transaction((tx) => tx.storyboards.save(id, board('picked'), 40))).toBe(3);
    await expect(store.storyboards.save(id, board('stale'), 50, 2)).rejects.toThrow(StaleStoryboard);
    expect(await store.storyboards.save(id, board('third'), 50, 3)).toBe(4);

    // Made from a revision of a storyboard that is not there: refused too, nothing written.
    const { id: hare } = await store.projects.ensure('Hare', 1);
    await expect(store.storyboards.save(hare, board('hare'), 60, 3)).rejects.toMatchObject({ from: 3, current: 0 });
    expect(await store.storyboards.raw(hare)).toBeUndefined();
  });

  it.skipIf(!available)('two studios saving from the same revision at once: one is taken, the other refused', async () => {
    const where = await fresh();
    const [a, b] = [await open(where), await open(where)];
    const { id } = await a.projects.ensure('Fox', 1);
    await a.storyboards.save(id, board('first'), 10, 0);
    const results = await Promise.allSettled([a.storyboards.save(id, board('from a'), 20, 1), b.storyboards.save(id, board('from b'), 20, 1)]);
    const taken = results.filter((r) => r.status === 'fulfilled');
    expect(taken).toEqual([{ status: 'fulfilled', value: 2 }]);
    expect(results.find((r) => r.status === 'rejected')!.reason).toBeInstanceOf(StaleStoryboard);
    expect(await b.storyboards.revision(id)).toBe(2);
  });
});
