import { connect } from './connection.ts';
import { requireDurable, type Durability } from './durability.ts';
import { TeamDatabaseRefused } from './errors.ts';
import { inspect, loadMigrations, refusal } from './migrator.ts';
import { PostgresOwnerStore } from './ownerStore.ts';

export interface TeamStatus {
  /** The address, password hidden. */
  where: string;
  /** The schema the database is at, and the one this studio knows (a studio joining brings an older one up to date). */
  version: number;
  known: number;
  /**
   * Machines with studio processes registered, one per machine id (two computers may share a name): running, or
   * stopped without a clean exit. `clockOffset`: the machine's clock less the database's, as its latest process
   * measured it (null before any did).
   */
  machines: { name: string; processes: number; since: number; clockOffset: number | null }[];
  /** This computer's clock less the database's, measured now. */
  clockOffset: number;
  /** The server's settings that keep a committed write through a crash (a server without them is refused). */
  durability: Durability;
}

/**
 * `studio team status`: reads only. A database a studio could not join is refused as joining would refuse it, and
 * so is a server that cannot keep a committed write through a crash.
 */
export async function teamStatus(url: string, migrationsDir?: string): Promise<TeamStatus> {
  const known = loadMigrations(migrationsDir).length;
  const team = connect(url, { max: 1 });
  try {
    const state = await inspect(team.sql);
    const refused = refusal(state, known, team.where, 'open');
    if (refused) throw new TeamDatabaseRefused(refused);
    const durability = await requireDurable(team.sql, team.where);
    const machines = await team.sql.query<TeamStatus['machines'][number]>(
      `SELECT hostname AS name, count(*)::int AS processes, min(started_at) AS since,
              (array_agg(clock_offset_ms ORDER BY clock_checked_at DESC NULLS LAST))[1] AS "clockOffset"
         FROM lease_owners GROUP BY hostname, machine_id ORDER BY hostname, min(started_at)`,
    );
    const clockOffset = await new PostgresOwnerStore(team.sql).checkClock(() => Date.now());
    return { where: team.where, version: state.kind === 'studio' ? state.version : 0, known, machines, clockOffset, durability };
  } finally {
    await team.end();
  }
}
