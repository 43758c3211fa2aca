import type { Store, Stores, TaskStore } from '../port.ts';
import { openTeamDatabase } from './migrator.ts';
import { PostgresOwnerStore } from './ownerStore.ts';
import { PostgresProjectStore } from './projectStore.ts';
import type { Sql } from './sql.ts';
import { PostgresStoryboardStore } from './storyboardStore.ts';
import { PostgresTakeStore } from './takeStore.ts';
import { PostgresTaskStore } from './taskStore.ts';

function storesOn(sql: Sql, machine: string | undefined, machineId?: string): Stores & { tasks: PostgresTaskStore } {
  return {
    tasks: new PostgresTaskStore(sql, machine, machineId),
    projects: new PostgresProjectStore(sql),
    storyboards: new PostgresStoryboardStore(sql),
    takes: new PostgresTakeStore(sql),
    owners: new PostgresOwnerStore(sql),
  };
}

/**
 * The team store: the team database at `url`, after checking it is a studio database this version can use
 * (brought up to date when older). Each call outside a transaction runs on a pooled connection of its own; a
 * transaction holds one connection from BEGIN to COMMIT and gives its function stores bound to it.
 *
 * Work enqueued or let go of inside a transaction is announced to this process's listeners once it commits:
 * before then no other connection, nor a claim this process starts, can see it.
 *
 * `machine` is the name this machine goes by in the team (the computer's name when absent): it is recorded on
 * the files it saves.
 */
export async function openPostgresStore(url: string, options: { machine?: string; machineId?: string } = {}): Promise<Store> {
  const team = await openTeamDatabase(url);
  const [identity] = await team.sql.query<{ id: string; space: string }>(`SELECT id, (SELECT name FROM media_space) AS space FROM database_identity`);
  const direct = storesOn(team.sql, options.machine, options.machineId);
  const listeners = new Set<() => void>();
  const announce = () => {
    for (const listener of listeners) listener();
  };
  direct.tasks.onClaimable(announce);
  const subscribe = (listener: () => void) => {
    listeners.add(listener);
    return () => void listeners.delete(listener);
  };
  const tasks = new Proxy<TaskStore>(direct.tasks, {
    get(target, name) {
      if (name === 'onClaimable') return subscribe;
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return {
    kind: 'postgres',
    where: team.where,
    // The team's machines save into one folder of the media folder, apart from any other database's.
    mediaSpace: identity!.space,
    databaseId: identity!.id,
    earlier: { databaseIds: [], spaces: [] },
    ...direct,
    tasks,
    transaction: async (fn) => {
      let claimable = false;
      const result = await team.sql.tx((sql) => {
        const bound = storesOn(sql, options.machine, options.machineId);
        bound.tasks.onClaimable(() => (claimable = true));
        return fn(bound);
      });
      if (claimable) announce();
      return result;
    },
    // A database on a server is not a file that can be deleted or replaced under the studio.
    moved: () => null,
    waitForLocks: (ms) => team.waitForLocks(ms ?? null),
    // The write-ahead log's position moves with every commit to the server, from any machine; a commit to another
    // database of the same server moves it too, which only costs the page a read it did not need.
    watch: () => ({
      read: async () => {
        const [row] = await team.sql.query<{ mark: string; unknown: number }>(
          `SELECT pg_current_wal_lsn()::text AS mark, (SELECT count(*) FROM tasks WHERE status = 'OUTCOME_UNKNOWN')::int AS unknown`,
        );
        return { mark: row!.mark, needsDecision: row!.unknown };
      },
      close: async () => undefined,
    }),
    close: () => team.end(),
  };
}
