import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from './helpers/cli.ts';
import { apiForTest } from './helpers/studioApi.ts';
import { tempDir } from './helpers/tmp.ts';

const board = (prompt: string) => ({ width: 320, height: 180, scenes: [{ id: 'dawn', imagePrompt: prompt, motionPrompt: 'push in', duration: 1 }] });

describe('a storyboard save made from an older revision than the saved one', () => {
  it('is answered 409 by the loopback host, saying what to do, and changes nothing; a save from the newest is taken', async () => {
    const call = await apiForTest(tempDir());
    await call('createProject', 'Fox');
    expect(await call('saveStoryboard', 'Fox', board('a fox asleep'))).toMatchObject({ status: 200, result: 1 });
    const tabA = (await call<{ revision: number }>('getStoryboard', 'Fox')).result;
    const tabB = (await call<{ revision: number }>('getStoryboard', 'Fox')).result;
    expect(tabA.revision).toBe(1);
    expect(await call('saveStoryboard', 'Fox', { ...tabA, ...board('a fox awake') })).toMatchObject({ status: 200, result: 2 });

    const stale = await call('saveStoryboard', 'Fox', { ...tabB, ...board('a fox running') });
    expect(stale.status).toBe(409);
    expect(stale.error).toMatch(/^the storyboard of "Fox" was saved by someone else since revision 1 \(it is at revision 2 now\); open it again/);
    const none = await call('saveStoryboard', 'Fox', board('a fox with no revision'));
    expect(none.status).toBe(409);
    expect(none.error).toMatch(/does not say which revision it was made from/);
    expect((await call('getStoryboard', 'Fox')).result).toMatchObject({ revision: 2, scenes: [{ imagePrompt: 'a fox awake' }] });
    expect(await call('storyboardRevision', 'Fox')).toMatchObject({ status: 200, result: 2 });

    // Saved over knowingly: made from the revision it now knows.
    expect(await call('saveStoryboard', 'Fox', { ...tabB, ...board('a fox running'), revision: 2 })).toMatchObject({ status: 200, result: 3 });
    expect((await call('saveStoryboard', 'Fox', { ...board('x'), revision: 'two' })).status).toBe(400);
  }, 30_000);

  it('exits 2 from "studio storyboard edit", saying how to see the newer one and how to save over it; nothing changes', async () => {
    const dir = tempDir();
    const file = join(dir, 'fox.json');
    writeFileSync(file, JSON.stringify(board('a fox asleep')));
    expect(await cli(dir, 'storyboard', 'create', 'Fox', '--file', file)).toMatchObject({ code: 0, out: 'Fox: storyboard created with 1 scene(s)' });

    // Two people take the same revision; one saves first.
    const shown = await cli(dir, 'storyboard', 'show', 'Fox', '--json');
    const mine = join(dir, 'mine.json');
    const theirs = join(dir, 'theirs.json');
    writeFileSync(mine, JSON.stringify({ ...JSON.parse(shown.out), scenes: board('mine').scenes }));
    writeFileSync(theirs, JSON.stringify({ ...JSON.parse(shown.out), scenes: board('theirs').scenes }));
    expect(JSON.parse(readFileSync(mine, 'utf8')).revision).toBe(1);
    expect((await cli(dir, 'storyboard', 'edit', 'Fox', '--file', theirs)).code).toBe(0);

    const refused = await cli(dir, 'storyboard', 'edit', 'Fox', '--file', mine);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/saved by someone else since revision 1 \(it is at revision 2 now\).*studio storyboard show Fox --json.*add --revision 2/);
    expect(JSON.parse((await cli(dir, 'storyboard', 'show', 'Fox', '--json')).out)).toMatchObject({ revision: 2, scenes: [{ imagePrompt: 'theirs' }] });
    expect((await cli(dir, 'storyboard', 'edit', 'Fox', '--file', file)).code).toBe(2);

    expect(await cli(dir, 'storyboard', 'edit', 'Fox', '--file', mine, '--revision', '2')).toMatchObject({ code: 0, out: 'Fox: storyboard saved with 1 scene(s), revision 3' });
    expect((await cli(dir, 'storyboard', 'edit', 'Fox', '--file', mine, '--revision', 'two')).code).toBe(2);
  });
});
