import { afterEach, describe, expect, it } from 'vitest';
import { connect, type TeamPool } from '../main/store/postgres/connection.ts';
import { PostgresTaskStore } from '../main/store/postgres/taskStore.ts';
import { freshDatabase, postgresAvailable } from './helpers/postgres.ts';

const LEASE = 60_000;

const pools: TeamPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.end()));
});

/** A project without a budget on a fresh team database, and one task of it claimed by `a`, priced at 100. */
async function claimedTask() {
  const url = await freshDatabase();
  const pool = connect(url);
  pools.push(pool);
  const tasks = new PostgresTaskStore(pool.sql, 'host-one');
  const [project] = await pool.sql.query<{ id: number }>(`INSERT INTO projects (name, created_at) VALUES ('Fox', 0) RETURNING id`);
  const estimate = { cost: 100, source: 'catalogue', currency: 'USD' };
  const { id } = await tasks.enqueue({ projectId: project!.id, kind: 'image', provider: 'fake', model: 'fake-image', input: { prompt: 'a fox' }, estimate }, Date.now());
  await tasks.claim('image', 4, LEASE, { owner: 'a', now: Date.now() });
  return { url, tasks, projectId: project!.id, id };
}

describe.skipIf(!postgresAvailable)('the boundary write of a project without a budget', () => {
  it('does not wait for the boundary writes of other machines in the same project', async () => {
    const { url, tasks, projectId, id } = await claimedTask();
    const other = connect(url);
    pools.push(other);
    // Another machine's boundary write of the project, under way: it holds the project's row as one does.
    const marked = await other.sql.tx(async (tx) => {
      await tx.query(`SELECT 1 FROM projects WHERE id = $1 FOR SHARE`, [projectId]);
      return tasks.markSubmitStarted(id, 'k', LEASE, { owner: 'a', now: Date.now() });
    });
    expect(marked).toMatchObject({ marked: { id, attempts: 1, charged: 'maybe', idempotencyKey: 'k' } });
    expect((await tasks.events(id)).map((e) => e.reason)).toEqual(['enqueued', 'claimed', 'submit started']);
  });

  it('waits for a budget being set on another machine, and is then checked against it and refused', async () => {
    const { url, tasks, projectId, id } = await claimedTask();
    const other = connect(url);
    pools.push(other);
    const refused = await other.sql.tx(async (tx) => {
      await tx.query(`UPDATE projects SET budget = 50 WHERE id = $1`, [projectId]);
      const mark = tasks.markSubmitStarted(id, 'k', LEASE, { owner: 'a', now: Date.now() });
      const waited = await Promise.race([mark.then(() => false), new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 300))]);
      expect(waited).toBe(true);
      return { mark };
    });
    expect(await refused.mark).toMatchObject({ refused: 'budget', task: { id } });
    expect(await tasks.get(id)).toMatchObject({ status: 'RUNNING', submitStartedAt: null, charged: 'no', attempts: 0 });
    expect((await tasks.events(id)).map((e) => e.reason)).toEqual(['enqueued', 'claimed']);
  });
});
