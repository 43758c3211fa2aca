import { onTestFinished } from 'vitest';
import { openDatabase } from '../../main/db/database.ts';
import { connect } from '../../main/store/postgres/connection.ts';
import type { Lease, OwnerStore, Store, TaskStore } from '../../main/store/port.ts';
import { ManualClock } from './engine.ts';
import type { StoreKind } from './stores.ts';

/**
 * A fresh store of either kind for tests that move time by hand. SQLite writes lease and next attempt times by
 * the caller's clock, so moving the manual clock is enough. PostgreSQL writes them by the database's clock, which
 * a test cannot move: time passing is played there by ageing every lease and next attempt time by as much.
 */
export interface StoreUnderTest {
  kind: StoreKind['kind'];
  store: Store;
  repo: TaskStore;
  owners: OwnerStore;
  projectId: number;
  clock: ManualClock;
  as(owner: string): Lease;
  /** Time passes: the manual clock (wall and monotonic) and the leases. */
  pass(ms: number): Promise<void>;
  /** The machine sleeps: the wall clock and the leases move on, the monotonic clock does not. */
  sleep(ms: number): Promise<void>;
  /** The clock leases are written by, now: the manual clock's, or the database's. */
  leaseNow(): Promise<number>;
  /** Runs a statement of the test's own on the store's database, by a connection of its own. */
  exec(sql: string): Promise<void>;
}

export async function openUnderTest(kind: StoreKind): Promise<StoreUnderTest> {
  const where = await kind.fresh();
  const store = await kind.open(where);
  const project = await store.projects.ensure('Test project', 0);
  const clock = new ManualClock();
  const common = { kind: kind.kind, store, repo: store.tasks, owners: store.owners, projectId: project.id, clock, as: (owner: string) => ({ owner, now: clock.now() }) };
  if (kind.kind === 'sqlite') {
    const db = openDatabase(where);
    onTestFinished(() => void db.close());
    return {
      ...common,
      pass: async (ms) => clock.advance(ms),
      sleep: async (ms) => void (clock.wall += ms),
      leaseNow: async () => clock.now(),
      exec: async (sql) => void db.prepare(sql).run(),
    };
  }
  const team = connect(where, { max: 1 });
  onTestFinished(() => team.end());
  const age = (ms: number) =>
    team.sql.query(
      `UPDATE tasks SET lease_expires_at = lease_expires_at - $1::bigint, heartbeat_at = heartbeat_at - $1::bigint,
                        next_attempt_at = next_attempt_at - $1::bigint`,
      [ms],
    );
  return {
    ...common,
    pass: async (ms) => {
      clock.advance(ms);
      await age(ms);
    },
    sleep: async (ms) => {
      clock.wall += ms;
      await age(ms);
    },
    leaseNow: async () => (await team.sql.query<{ ms: number }>(`SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint AS ms`))[0]!.ms,
    exec: async (sql) => void (await team.sql.query(sql)),
  };
}
