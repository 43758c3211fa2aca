import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { parseStoryboard } from '../main/providers/storyboards.ts';
import type { TakeRecord } from '../main/domain/takeRecord.ts';
import { ProjectRefused } from '../main/domain/project.ts';
import type { Stores } from '../main/store/port.ts';
import { imageTask } from './helpers/engine.ts';
import { storeKinds } from './helpers/stores.ts';

const BOARD = parseStoryboard({ scenes: [{ id: 'fox', imagePrompt: 'a red fox', duration: 2 }] });

async function someTake(store: Pick<Stores, 'tasks'>, projectId: number, scene: string): Promise<Omit<TakeRecord, 'take'>> {
  const image = await store.tasks.enqueue(imageTask(projectId, `${scene} image`), 1);
  const clip = await store.tasks.enqueue({ ...imageTask(projectId, `${scene} clip`), kind: 'clip' }, 1);
  return {
    projectId,
    scene,
    variant: 1,
    imagePrompt: `${scene} image`,
    motionPrompt: 'slowly',
    narration: null,
    duration: 2.5,
    seed: 2 ** 40 + 7,
    imageTaskId: image.id,
    clipTaskId: clip.id,
    speechTaskId: null,
    createdAt: 1_700_000_000_000,
  };
}

describe.each(storeKinds())('the $kind store: projects, storyboards, takes and owners', ({ kind, available, fresh, open }) => {
  it.skipIf(!available)('projects: the first use of a name creates it, once, trimmed; budgets set and cleared', async () => {
    const store = await open();
    const fox = await store.projects.ensure('  Fox  ', 10);
    expect(fox).toEqual({ id: expect.any(Number), name: 'Fox', budget: null, currency: 'USD', createdAt: 10 });
    expect(await store.projects.ensure('Fox', 20)).toEqual(fox);
    const hare = await store.projects.ensure('Hare', 30);
    expect(await store.projects.byName('Fox')).toEqual(fox);
    expect(await store.projects.byName('Owl')).toBeUndefined();
    await store.projects.setBudget(fox.id, 5_000_000);
    expect((await store.projects.list()).map((p) => [p.name, p.budget])).toEqual([['Fox', 5_000_000], ['Hare', null]]);
    await store.projects.setBudget(fox.id, null);
    expect((await store.projects.byName('Fox'))!.budget).toBeNull();
    await expect(store.projects.ensure('\t', 1)).rejects.toThrow(ProjectRefused);
    expect(await store.transaction((tx) => tx.projects.lock(hare.id))).toEqual(hare);
    expect(await store.transaction((tx) => tx.projects.lock(hare.id + 100))).toBeUndefined();
  });

  it.skipIf(!available)('two studios naming one new project at once get the same project', async () => {
    const where = await fresh();
    const [a, b] = [await open(where), await open(where)];
    const made = await Promise.all([a.projects.ensure('Shared', 1), b.projects.ensure('Shared', 2), a.projects.ensure('Shared', 3)]);
    expect(new Set(made.map((p) => p.id)).size).toBe(1);
    expect(await b.projects.list()).toHaveLength(1);
  });

  it.skipIf(!available)('storyboards: saved, replaced, read back checked or as stored', async () => {
    const store = await open();
    const { id } = await store.projects.ensure('Fox', 1);
    expect(await store.storyboards.get(id)).toBeUndefined();
    expect(await store.storyboards.raw(id)).toBeUndefined();
    await store.storyboards.save(id, BOARD, 2);
    expect(await store.storyboards.get(id)).toEqual(BOARD);
    const longer = parseStoryboard({ scenes: [...BOARD.scenes, { id: 'hare', imagePrompt: 'a hare', duration: 3 }] });
    await store.storyboards.save(id, longer, 3);
    expect(await store.storyboards.get(id)).toEqual(longer);
    expect(await store.storyboards.raw(id)).toEqual(JSON.parse(JSON.stringify(longer)));
  });

  it.skipIf(!available)('takes: numbered per scene, listed by scene (by its bytes) and take, picked and picked again', async () => {
    const store = await open();
    const { id } = await store.projects.ensure('Fox', 1);
    const first = await store.takes.add(await someTake(store, id, 'a-scene'));
    const second = await store.takes.add(await someTake(store, id, 'a-scene'));
    const other = await store.takes.add(await someTake(store, id, 'B-scene'));
    expect([first.take, second.take, other.take]).toEqual([1, 2, 1]);
    const listed = await store.takes.list(id);
    expect(listed.map((t) => [t.scene, t.take])).toEqual([['B-scene', 1], ['a-scene', 1], ['a-scene', 2]]);
    expect(listed[1]).toEqual(first);
    expect((await store.takes.list(id, 'a-scene')).map((t) => t.take)).toEqual([1, 2]);
    expect(await store.takes.picks(id)).toEqual(new Map());
    await store.takes.pick(id, 'a-scene', 2, 5);
    await store.takes.pick(id, 'B-scene', 1, 5);
    await store.takes.pick(id, 'a-scene', 1, 6);
    expect(await store.takes.picks(id)).toEqual(new Map([['a-scene', 1], ['B-scene', 1]]));
  });

  it.skipIf(!available || kind === 'sqlite')('takes of one scene added at once from two machines are numbered one after the other', async () => {
    const where = await fresh();
    const [a, b] = [await open(where), await open(where)];
    const { id } = await a.projects.ensure('Fox', 1);
    const made = await Promise.all([a, b, a, b, a, b].map(async (store) => store.takes.add(await someTake(store, id, 'fox'))));
    expect(made.map((t) => t.take).sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it.skipIf(!available)('owners: registered by machine id and boot (a name may be shared, a data folder copied), seen again, removed', async () => {
    const store = await open();
    const here = hostname();
    const [mine, theirs] = ['a'.repeat(32), 'b'.repeat(32)];
    await store.owners.register({ id: `${here}:100:aa`, hostname: here, machine: mine, boot: 'boot-1', pid: 100 }, 1);
    await store.owners.register({ id: `${here}:100:bb`, hostname: here, machine: theirs, boot: 'boot-1', pid: 100 }, 1);
    // The same machine id from a copied data folder on another computer, and one registered with no boot known.
    await store.owners.register({ id: `${here}:100:cc`, hostname: here, machine: mine, boot: 'boot-2', pid: 100 }, 1);
    await store.owners.register({ id: `${here}:100:dd`, hostname: here, machine: mine, boot: null, pid: 100 }, 1);
    await store.owners.register({ id: `${here}:100:aa`, hostname: here, machine: mine, boot: 'boot-1', pid: 100 }, 2);
    expect(await store.owners.onMachine(mine, 'boot-1')).toEqual([{ id: `${here}:100:aa`, pid: 100 }]);
    expect(await store.owners.onMachine(mine, 'boot-2')).toEqual([{ id: `${here}:100:cc`, pid: 100 }]);
    expect(await store.owners.onMachine(theirs, 'boot-1')).toEqual([{ id: `${here}:100:bb`, pid: 100 }]);
    await store.owners.remove(`${here}:100:aa`);
    expect(await store.owners.onMachine(mine, 'boot-1')).toEqual([]);
  });

  it.skipIf(!available)('a transaction that throws leaves nothing of what it wrote', async () => {
    const store = await open();
    const kept = await store.projects.ensure('Kept', 1);
    const boom = new Error('not after all');
    await expect(
      store.transaction(async (tx) => {
        const p = await tx.projects.ensure('Dropped', 2);
        await tx.projects.setBudget(kept.id, 7);
        await tx.storyboards.save(p.id, BOARD, 2);
        await tx.takes.add(await someTake(tx, p.id, 'fox'));
        await tx.owners.register({ id: 'h:1:x', hostname: 'h', machine: 'm', boot: 'b', pid: 1 }, 2);
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(await store.projects.list()).toEqual([kept]);
    expect(await store.owners.onMachine('m', 'b')).toEqual([]);
    expect(await store.tasks.list()).toEqual([]);
  });
});

describe.each(storeKinds().filter((s) => s.kind === 'postgres'))('the $kind store: holding a project', ({ available, fresh, open }) => {
  it.skipIf(!available)('a project held in one studio\'s transaction waits for it to end in another\'s', async () => {
    const where = await fresh();
    const [a, b] = [await open(where), await open(where)];
    const { id } = await a.projects.ensure('Fox', 1);
    const order: string[] = [];
    let holding!: () => void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    const first = a.transaction(async (tx) => {
      await tx.projects.lock(id);
      holding();
      await new Promise((r) => setTimeout(r, 300));
      await tx.projects.setBudget(id, 1);
      order.push('a commits');
    });
    await held;
    const second = b.transaction(async (tx) => {
      const seen = await tx.projects.lock(id);
      order.push(`b holds, budget ${seen!.budget}`);
    });
    await Promise.all([first, second]);
    expect(order).toEqual(['a commits', 'b holds, budget 1']);
  });

  it.skipIf(!available)('work enqueued in a transaction is announced to this studio once it has committed', async () => {
    const where = await fresh();
    const [store, other] = [await open(where), await open(where)];
    const { id } = await store.projects.ensure('Fox', 1);
    const seenByOther: number[] = [];
    const heard: Promise<void>[] = [];
    store.tasks.onClaimable(() => heard.push(other.tasks.list().then((tasks) => void seenByOther.push(tasks.length))));
    await store.transaction(async (tx) => {
      await tx.tasks.enqueue(imageTask(id), 1);
      await tx.tasks.enqueue(imageTask(id, 'a hare'), 1);
      expect(heard).toHaveLength(0);
    });
    await Promise.all(heard);
    expect(seenByOther).toEqual([2]);
    await store.tasks.enqueue(imageTask(id, 'an owl'), 1);
    await Promise.all(heard);
    expect(seenByOther).toEqual([2, 3]);
  });
});
