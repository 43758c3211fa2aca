import { afterEach, describe, expect, it } from 'vitest';
import { connect, type TeamPool } from '../main/store/postgres/connection.ts';
import { PostgresTaskStore } from '../main/store/postgres/taskStore.ts';
import { freshDatabase, postgresAvailable } from './helpers/postgres.ts';

const pools: TeamPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.end()));
});

function pool(url: string, max: number): TeamPool {
  const p = connect(url, { max });
  pools.push(p);
  return p;
}

const backend = async (p: TeamPool) => (await p.sql.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))[0]!.pid;
const preparedHere = async (p: TeamPool) => (await p.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_prepared_statements'))[0]!.n;

describe.skipIf(!postgresAvailable)('prepared statements on the team database', () => {
  it('prepares a statement once per connection and runs it again after another machine adds a column to its table', async () => {
    const url = await freshDatabase();
    const here = pool(url, 1);
    const elsewhere = pool(url, 1);
    const [project] = await here.sql.query<{ id: number }>(`INSERT INTO projects (name, created_at) VALUES ($1, 0) RETURNING id`, ['Fox']);
    const projectId = project!.id;
    const tasks = new PostgresTaskStore(here.sql, 'host-one');
    const { id } = await tasks.enqueue({ projectId, kind: 'image', provider: 'fake', model: 'fake-image', input: { prompt: 'a fox' } }, 1);
    expect(await tasks.get(id)).toMatchObject({ id, status: 'PENDING' });
    const first = await backend(here);
    const prepared = await preparedHere(here);
    expect(prepared).toBeGreaterThanOrEqual(3);
    expect(await tasks.get(id)).toMatchObject({ id });
    expect(await preparedHere(here)).toBe(prepared);

    // Another machine's studio migrates the table under the statements this connection prepared with `*`.
    await elsewhere.sql.query(`ALTER TABLE tasks ADD COLUMN added_elsewhere TEXT`);
    expect(await tasks.get(id)).toMatchObject({ id, status: 'PENDING' });
    expect(await backend(here)).not.toBe(first);
    // A write's RETURNING * too, and its event with it.
    expect(await tasks.claim('image', 1, 60_000, { owner: 'a', now: 2 })).toMatchObject([{ id, status: 'RUNNING' }]);
    await elsewhere.sql.query(`ALTER TABLE tasks ADD COLUMN added_later TEXT`);
    const output = { path: '/media/fox.png', sha256: 'a'.repeat(64), bytes: 1, contentType: 'image/png' };
    expect(await tasks.complete(id, { outputs: [output], costActual: null }, { owner: 'a', now: 3 })).toMatchObject({ id, status: 'SUCCEEDED' });
    expect((await tasks.events(id)).map((e) => e.toStatus)).toEqual(['PENDING', 'RUNNING', 'SUCCEEDED']);
  });

  it('rolls a transaction back whole when a table changed under its prepared statement, saying so; made again, it holds', async () => {
    const url = await freshDatabase();
    const here = pool(url, 1);
    const elsewhere = pool(url, 1);
    await here.sql.query(`CREATE TABLE notes (id BIGINT PRIMARY KEY, body TEXT)`);
    await here.sql.query(`INSERT INTO notes VALUES ($1, $2)`, [1, 'one']);
    expect(await here.sql.query(`SELECT * FROM notes WHERE id = $1`, [1])).toEqual([{ id: 1, body: 'one' }]);
    const first = await backend(here);
    await elsewhere.sql.query(`ALTER TABLE notes ADD COLUMN extra TEXT`);
    const write = () =>
      here.sql.tx(async (tx) => {
        await tx.query(`INSERT INTO notes VALUES ($1, $2)`, [2, 'two']);
        return tx.query(`SELECT * FROM notes WHERE id = $1`, [1]);
      });
    const refused = await write().catch((err: unknown) => err);
    expect(refused).toMatchObject({ name: 'TablesChanged', code: '0A000' });
    expect((refused as Error).message).toBe(
      "the team database's tables changed under this transaction (another machine's studio changed their columns): it was rolled back and nothing of it was written; this machine's connections are renewed, so it can be made again",
    );
    expect(await elsewhere.sql.query(`SELECT id FROM notes ORDER BY id`)).toEqual([{ id: 1 }]);
    expect(await write()).toEqual([{ id: 1, body: 'one', extra: null }]);
    expect(await backend(here)).not.toBe(first);
    expect(await elsewhere.sql.query(`SELECT id FROM notes ORDER BY id`)).toEqual([{ id: 1 }, { id: 2 }]);
  });
});
