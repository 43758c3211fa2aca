import { describe, expect, it } from 'vitest';
import { apiForTest } from './helpers/studioApi.ts';
import { tempDir } from './helpers/tmp.ts';

const IDEA = 'An owl wakes at dusk. It glides over a frozen lake. It lands on a pine as the moon rises.';
const board = (prompt: string) => ({ width: 320, height: 180, scenes: [{ id: 'dusk', imagePrompt: prompt, duration: 1 }] });

describe('drafting a storyboard through the API', () => {
  it('prices first, drafts once, and never overwrites a storyboard saved since the revision it replaces', async () => {
    const call = await apiForTest(tempDir());
    await call('createProject', 'Owl');
    const priced = await call<{ cost: number; reuses: number | null; provider: string }>('estimateDraft', 'Owl', { idea: IDEA, scenes: 3 });
    expect(priced).toMatchObject({ status: 200, result: { provider: 'simulator', reuses: null } });
    expect(priced.result.cost).toBeGreaterThan(0);

    expect(await call('draftStoryboard', 'Owl', { idea: IDEA, scenes: 3, revision: 0 })).toMatchObject({ status: 200, result: { revision: 1, scenes: 3 } });
    expect((await call<{ scenes: { narration: string }[] }>('getStoryboard', 'Owl')).result.scenes.map((s) => s.narration)).toEqual([
      'An owl wakes at dusk.',
      'It glides over a frozen lake.',
      'It lands on a pine as the moon rises.',
    ]);

    // Someone saves an edit; a draft made from revision 1 is refused and changes nothing, at no new charge.
    expect(await call('saveStoryboard', 'Owl', { ...board('an owl, edited'), revision: 1 })).toMatchObject({ status: 200, result: 2 });
    const stale = await call('draftStoryboard', 'Owl', { idea: IDEA, scenes: 3, revision: 1 });
    expect(stale.status).toBe(409);
    expect(stale.error).toMatch(/^the storyboard of "Owl" was saved by someone else since revision 1 \(it is at revision 2 now\)/);
    expect((await call('getStoryboard', 'Owl')).result).toMatchObject({ revision: 2, scenes: [{ imagePrompt: 'an owl, edited' }] });

    expect(await call('estimateDraft', 'Owl', { idea: IDEA, scenes: 3 })).toMatchObject({ result: { cost: 0, reuses: 1 } });
    expect(await call('draftStoryboard', 'Owl', { idea: IDEA, scenes: 3, revision: 2 })).toMatchObject({ status: 200, result: { taskId: 1, revision: 3 } });
    expect((await call<{ tasks: unknown[] }>('listTasks', 'Owl', 0, 50)).result.tasks).toHaveLength(1);

    const empty = await call('estimateDraft', 'Owl', { idea: '  ', scenes: 3 });
    expect(empty).toMatchObject({ status: 400, error: 'the idea: write a few sentences of what the film is about' });
    expect((await call('draftStoryboard', 'Owl', { idea: IDEA, scenes: 99 })).error).toMatch(/scenes: must be a whole number from 1 to 24, not 99/);
  }, 60_000);
});
