import { it as base, describe, expect } from 'vitest';
import { ApiConflict, refusals } from '../main/api/apiErrors.ts';
import { Pipeline } from '../main/pipeline/generate.ts';
import { pickTake } from '../main/pipeline/takes.ts';
import { parseStoryboard } from '../main/providers/storyboards.ts';
import { openProviders } from '../main/providers/registry.ts';
import { openStudio, type Studio } from '../main/studio.ts';
import { storeKinds } from './helpers/stores.ts';
import { tempDir } from './helpers/tmp.ts';

const BOARD = { aspect: '9:16', resolution: 480, scenes: [{ id: 'a', imagePrompt: 'a red fox', duration: 2 }, { id: 'b', imagePrompt: 'a blue owl', duration: 2 }] };

/**
 * The studio a Generate is made with, where `meanwhile` (another tab's save, a pick) runs once after the Generate
 * priced its steps and before its enqueue transaction: the moment the network wait of pricing leaves open.
 */
function racing(studio: Studio) {
  let meanwhile: (() => Promise<unknown>) | null = null;
  const store = Object.assign(Object.create(studio.store) as Studio['store'], {
    transaction: async <T>(fn: Parameters<Studio['store']['transaction']>[0]): Promise<T> => {
      const run = meanwhile;
      meanwhile = null;
      if (run) await run();
      return studio.store.transaction(fn) as Promise<T>;
    },
  });
  return { studio: { ...studio, store }, meanwhile: (fn: () => Promise<unknown>) => (meanwhile = fn) };
}

describe.each(storeKinds())('on the $kind store, a Generate priced while the storyboard was saved', (kind) => {
  const it = base.skipIf(!kind.available);

  it("is refused as a conflict (409): another tab's edit and a pick stay, nothing is enqueued", async () => {
    const dataDir = tempDir();
    const database = kind.kind === 'postgres' ? await kind.fresh() : undefined;
    const studio = await openStudio(dataDir, undefined, { database });
    const providers = await openProviders(studio.settings, dataDir);
    try {
      const race = racing(studio);
      const pipeline = new Pipeline({ studio: race.studio, provider: providers.get, defaults: studio.settings.defaults });
      const { id } = await studio.projects.ensure('P', Date.now());
      await studio.storyboards.save(id, parseStoryboard(BOARD), Date.now(), 0);
      await pipeline.generate('P');
      const tasks = (await studio.tasks.list()).length;

      // Another tab saves its edit of scene b, made from revision 1, while a new take of scene a is priced.
      race.meanwhile(() => studio.storyboards.save(id, parseStoryboard({ ...BOARD, scenes: [BOARD.scenes[0], { ...BOARD.scenes[1], imagePrompt: 'a golden owl' }] }), Date.now(), 1));
      const refused = await refusals(() => pipeline.generate('P', { newTakes: ['a'] })).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ApiConflict);
      expect((refused as Error).message).toBe('the storyboard of "P" changed while this Generate was being priced (from revision 1 to 2); nothing was enqueued, try again');
      expect(await studio.storyboards.revision(id)).toBe(2);
      expect((await studio.storyboards.get(id))!.scenes.map((s) => [s.imagePrompt, s.take])).toEqual([['a red fox', 1], ['a golden owl', 1]]);
      expect((await studio.tasks.list()).length).toBe(tasks);

      // Tried again, it is made from what is saved now: the edit stays.
      await pipeline.generate('P', { newTakes: ['a'] });
      expect((await studio.storyboards.get(id))!.scenes.map((s) => [s.imagePrompt, s.take])).toEqual([['a red fox', 2], ['a golden owl', 1]]);

      // Take 1 of scene a is picked back while a new take of scene b is priced: the storyboard follows the pick.
      race.meanwhile(() => pickTake(studio, 'P', 'a', 1));
      await expect(refusals(() => pipeline.generate('P', { newTakes: ['b'] }))).rejects.toThrow(ApiConflict);
      expect((await studio.takes.picks(id)).get('a')).toBe(1);
      expect((await studio.storyboards.get(id))!.scenes.map((s) => s.take)).toEqual([1, 1]);
    } finally {
      await providers.close();
      await studio.close();
    }
  });
});
