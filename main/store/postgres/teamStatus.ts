import { connect } from './connection.ts';
import { TeamDatabaseRefused } from './errors.ts';
import { inspect, loadMigrations, refusal } from './migrator.ts';

export interface TeamStatus {
  /** The address, password hidden. */
  where: string;
  /** The schema the database is at, and the one this studio knows (a studio joining brings an older one up to date). */
  version: number;
  known: number;
  /** Machines with studio processes registered: running, or stopped without a clean exit. */
  machines: { name: string; processes: number; since: number }[];
}

/** `studio team status`: reads only. A database a studio could not join is refused as joining would refuse it. */
export async function teamStatus(url: string, migrationsDir?: string): Promise<TeamStatus> {
  const known = loadMigrations(migrationsDir).length;
  const team = connect(url, { max: 1 });
  try {
    const state = await inspect(team.sql);
    const refused = refusal(state, known, team.where, 'open');
    if (refused) throw new TeamDatabaseRefused(refused);
    const machines = await team.sql.query<{ name: string; processes: number; since: number }>(
      `SELECT hostname AS name, count(*)::int AS processes, min(started_at) AS since FROM lease_owners GROUP BY hostname ORDER BY hostname`,
    );
    return { where: team.where, version: state.kind === 'studio' ? state.version : 0, known, machines };
  } finally {
    await team.end();
  }
}
