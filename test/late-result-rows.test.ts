import { describe, expect, it as base } from 'vitest';
import { imageTask } from './helpers/engine.ts';
import { openUnderTest } from './helpers/storeUnderTest.ts';
import { storeKinds } from './helpers/stores.ts';

/**
 * The result of an attempt that turns up after its row moved on, against both stores: a row failed as paid with its
 * result out of reach is completed by it; files are never linked onto a result the person deleted; with every file
 * linked already, there is nothing to say.
 */

const LEASE = 30_000;
const file = (name: string) => ({ path: `projects/1/media/${name}`, sha256: 'f'.repeat(64), bytes: 1, contentType: 'image/png' });

describe.each(storeKinds())('the $kind task store', (kind) => {
  const it = base.skipIf(!kind.available);
  const setup = () => openUnderTest(kind);

  it('completes a row failed as paid but out of reach when that attempt\'s result turns up, never one of another attempt', async () => {
    const { repo, projectId, clock, as } = await setup();
    const ids: number[] = [];
    for (const p of ['synchronous', 'expired']) ids.push((await repo.enqueue(imageTask(projectId, p), clock.now())).id);
    await repo.claim('image', 4, LEASE, as('a'));
    for (const id of ids) await repo.markSubmitStarted(id, `k${id}`, LEASE, as('a'));
    const [synchronous, expired] = ids as [number, number];
    await repo.fail(synchronous, 'OpenAI keeps no copy of a synchronous result: it was paid for and cannot be fetched again', 'yes', as('a'));
    await repo.fail(expired, 'paid, result expired at the provider', 'yes', as('a'));
    const out = (id: number) => ({ outputs: [file(`task-${id}-a1.png`), file(`task-${id}-a1-1.png`)], costActual: null, requestId: `req-${id}` });

    for (const id of ids) {
      expect(await repo.completeAttempt(id, `k${id}-other`, out(id), clock.now())).toBeUndefined();
      expect((await repo.get(id))!.status).toBe('FAILED');
      expect(await repo.completeAttempt(id, `k${id}`, out(id), clock.now())).toMatchObject({ status: 'SUCCEEDED', charged: 'yes', error: null, outputPath: `projects/1/media/task-${id}-a1.png` });
      expect((await repo.outputs(id)).map((o) => o.path)).toEqual([`projects/1/media/task-${id}-a1.png`, `projects/1/media/task-${id}-a1-1.png`]);
    }
  });

  it('links no file onto a result the person deleted, and says so with null; 0 when every file is linked already', async () => {
    const { repo, projectId, clock, as } = await setup();
    const { id } = await repo.enqueue(imageTask(projectId), clock.now());
    await repo.claim('image', 4, LEASE, as('a'));
    await repo.markSubmitStarted(id, 'k1', LEASE, as('a'));
    await repo.complete(id, { outputs: [file('task-1-a1.png')], costActual: null, requestId: 'req-1' }, as('a'));
    const both = [file('task-1-a1.png'), file('task-1-a1-1.png')];
    expect(await repo.linkLateOutputs(id, 'k1', both, 'linked', clock.now())).toBe(1);
    expect(await repo.linkLateOutputs(id, 'k1', both, 'linked', clock.now())).toBe(0);
    expect(await repo.linkLateOutputs(id, 'k0', [file('task-1-a0-2.png')], 'linked', clock.now())).toBeNull();

    await repo.forgetOutputs(id, 'deleted by the person in the library', [], clock.now());
    expect(await repo.linkLateOutputs(id, 'k1', [file('task-1-a1-2.png')], 'linked', clock.now())).toBeNull();
    expect((await repo.outputs(id)).map((o) => o.path)).toEqual(both.map((o) => o.path));
    expect((await repo.get(id))!.outputPath).toBeNull();
  });

  it('a file linked once is never linked again under another path: a worker going on after the data folder moved names it at the old place', async () => {
    const { repo, projectId, clock, as } = await setup();
    const { id } = await repo.enqueue(imageTask(projectId), clock.now());
    await repo.claim('image', 4, LEASE, as('a'));
    await repo.markSubmitStarted(id, 'k1', LEASE, as('a'));
    // Two images of one request may be the same bytes: only their place in the attempt tells them apart.
    await repo.complete(id, { outputs: [file('task-1-a1.png')], costActual: null, requestId: 'req-1' }, as('a'));
    const atOldPlace = (name: string) => ({ ...file(name), path: `/Users/old/Studio/projects/1/media/${name}` });
    expect(await repo.linkLateOutputs(id, 'k1', [atOldPlace('task-1-a1.png'), atOldPlace('task-1-a1-1.png')], 'linked', clock.now())).toBe(1);
    expect(await repo.linkLateOutputs(id, 'k1', [file('task-1-a1.png'), file('task-1-a1-1.png')], 'linked', clock.now())).toBe(0);
    // A name that does not say its place is known by its checksum.
    expect(await repo.linkLateOutputs(id, 'k1', [{ ...file('copy.png'), path: 'rescued/copy.png' }], 'linked', clock.now())).toBe(0);
    expect((await repo.outputs(id)).map((o) => o.path)).toEqual(['projects/1/media/task-1-a1.png', '/Users/old/Studio/projects/1/media/task-1-a1-1.png']);
  });
});
