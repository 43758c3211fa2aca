import { describe, expect, it as base } from 'vitest';
import { connect } from '../main/store/postgres/connection.ts';
import { REQUEST_HELD_NOTE } from '../main/domain/tasks/requestHeld.ts';
import { imageTask } from './helpers/engine.ts';
import { openUnderTest } from './helpers/storeUnderTest.ts';
import { storeKinds } from './helpers/stores.ts';
import { until } from './helpers/wait.ts';

/**
 * A provider that names, with a result, a request id another task of it already holds: the paid result is kept
 * on its task all the same, the id stays with the task that holds it, and the task's history says so.
 */

const LEASE = 60_000;
const out = (name: string, requestId: string) => ({ outputs: [{ path: `/m/${name}.png`, sha256: 'f'.repeat(64), bytes: 1, contentType: 'image/png' }], costActual: 30_000, requestId });

describe.each(storeKinds())('on the $kind store', (kind) => {
  const it = base.skipIf(!kind.available);

  it('a completion keeps its result and the task its own request id; the event says another task holds the one named', async () => {
    const { repo, projectId, clock, as } = await openUnderTest(kind);
    const ids: number[] = [];
    for (const p of ['holder', 'running', 'parked', 'own id']) ids.push((await repo.enqueue(imageTask(projectId, p), clock.now())).id);
    const [holder, running, parked, ownId] = ids as [number, number, number, number];
    await repo.claim('image', 4, LEASE, as('a'));
    for (const id of ids) await repo.markSubmitStarted(id, `k${id}`, LEASE, as('a'));
    await repo.recordSubmitted(holder, { requestId: 'req-1', handle: null }, null, as('a'));
    await repo.recordSubmitted(ownId, { requestId: 'req-own', handle: null }, null, as('a'));
    await repo.parkUnknown(parked, 'lost', as('a'));

    // Named in another case than the holder's: one request all the same.
    expect(await repo.complete(running, out('running', 'REQ-1'), as('a'))).toMatchObject({ status: 'SUCCEEDED', charged: 'yes', outputPath: '/m/running.png', remoteRequestId: null, costActual: 30_000 });
    expect(await repo.completeAttempt(parked, `k${parked}`, out('parked', 'req-1'), clock.now())).toMatchObject({ status: 'SUCCEEDED', outputPath: '/m/parked.png', remoteRequestId: null });
    expect(await repo.complete(ownId, out('own', 'req-1'), as('a'))).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: 'req-own' });

    for (const [id, named] of [[running, 'REQ-1'], [parked, 'req-1']] as const) {
      expect((await repo.outputs(id)).map((o) => o.path)).toHaveLength(1);
      expect((await repo.events(id)).at(-1)).toMatchObject({ toStatus: 'SUCCEEDED', detail: { requestId: named, heldBy: holder, note: REQUEST_HELD_NOTE } });
    }
    expect((await repo.events(ownId)).at(-1)).toMatchObject({ toStatus: 'SUCCEEDED', detail: null });
    expect(await repo.get(holder)).toMatchObject({ status: 'SUBMITTED', remoteRequestId: 'req-1' });
  });
});

const postgres = storeKinds().find((k) => k.kind === 'postgres')!;

describe.skipIf(!postgres.available)('on the postgres store, racing another machine', () => {
  base('a completion whose request id another transaction gives to another task meanwhile is kept when that commits', async () => {
    const where = await postgres.fresh();
    const { repo, projectId } = await openUnderTest({ ...postgres, fresh: async () => where });
    const holder = (await repo.enqueue(imageTask(projectId, 'holder'), Date.now())).id;
    const done = (await repo.enqueue(imageTask(projectId, 'done'), Date.now())).id;
    await repo.claim('image', 4, LEASE, { owner: 'a', now: Date.now() });
    await repo.markSubmitStarted(done, 'k-done', LEASE, { owner: 'a', now: Date.now() });

    const other = connect(where, { max: 2 });
    try {
      let commit!: () => void;
      const held = other.sql.tx(async (tx) => {
        await tx.query(`UPDATE tasks SET remote_request_id = 'req-1' WHERE id = $1`, [holder]);
        await new Promise<void>((resolve) => (commit = resolve));
      });
      await until(() => commit !== undefined);
      const completed = repo.complete(done, out('done', 'req-1'), { owner: 'a', now: Date.now() });
      // The completion waits at the unique index for the other transaction's row.
      await until(async () => (await other.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted`))[0]!.n > 0);
      commit();
      await held;
      expect(await completed).toMatchObject({ status: 'SUCCEEDED', outputPath: '/m/done.png', remoteRequestId: null });
      expect((await repo.events(done)).at(-1)!.detail).toEqual({ requestId: 'req-1', heldBy: holder, note: REQUEST_HELD_NOTE });
    } finally {
      await other.end();
    }
  });
});
