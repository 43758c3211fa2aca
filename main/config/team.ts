import { hostname } from 'node:os';
import { checkTeamUrl } from '../store/postgres/address.ts';
import { TeamDatabaseRefused } from '../store/postgres/errors.ts';
import { mediaDirProblem } from './media.ts';

/** Team mode on this machine, from settings.json: the team database it joins, and the name it goes by there. */
export interface TeamSettings {
  databaseUrl?: string;
  machineName?: string;
  /** The media folder the team shares, where this machine mounts it (see config/media.ts). */
  mediaDir?: string;
}

/** Where the team database's address came from; the first of these that gives one wins. */
export type DatabaseSource = 'flag' | 'environment' | 'settings';

export interface ChosenDatabase {
  url: string;
  from: DatabaseSource;
}

const EXAMPLE_URL = 'postgres://user:password@host:5432/studio';

/**
 * A name chosen for this machine: it goes into owner ids (host:pid:random) and onto saved outputs, so it has no
 * colon nor spaces; letters, digits, dots, dashes and underscores, as a host name has.
 */
const MACHINE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/** Why `name` cannot name a machine, or null. */
export function machineNameProblem(name: string): string | null {
  return MACHINE_NAME.test(name)
    ? null
    : `"${name.slice(0, 80)}" cannot name a machine: use 1 to 63 letters, digits, dots, dashes or underscores, starting with a letter or digit (like studio-laptop)`;
}

/** Why `url` cannot be a team database's address, or null. */
export function databaseUrlProblem(url: string): string | null {
  try {
    checkTeamUrl(url);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** settings.json's `team`, checked: each problem is thrown as `fail(message)` naming the field. */
export function checkTeamSettings(raw: unknown, fail: (message: string) => Error): TeamSettings {
  if (raw === undefined) return {};
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw fail('settings: team must be an object like {"databaseUrl": "postgres://…", "machineName": "studio-laptop"}');
  const team = raw as Record<string, unknown>;
  for (const key of Object.keys(team)) {
    if (key !== 'databaseUrl' && key !== 'machineName' && key !== 'mediaDir') throw fail(`settings: team has no field "${key}"; it takes databaseUrl, machineName and mediaDir`);
  }
  if (team.databaseUrl !== undefined) {
    const url = team.databaseUrl;
    if (typeof url !== 'string') throw fail(`settings: team.databaseUrl must be the team database's address, like ${EXAMPLE_URL}`);
    const problem = databaseUrlProblem(url);
    if (problem) throw fail(`settings: team.databaseUrl: ${problem}; or remove it to use the database on this machine`);
  }
  if (team.machineName !== undefined) {
    const name = team.machineName;
    if (typeof name !== 'string') throw fail('settings: team.machineName must be text, like "studio-laptop"');
    const problem = machineNameProblem(name);
    if (problem) throw fail(`settings: team.machineName: ${problem}`);
  }
  if (team.mediaDir !== undefined) {
    const problem = mediaDirProblem(team.mediaDir);
    if (problem) throw fail(`settings: team.mediaDir: ${problem}`);
  }
  return team as TeamSettings;
}

/**
 * The team database this studio uses, or null for the embedded one: the command line's --db, then
 * STUDIO_DATABASE_URL, then settings.json. An address given but not usable is refused, saying where it came from.
 */
export function chooseDatabase(flag: string | undefined, env: NodeJS.ProcessEnv, team: TeamSettings): ChosenDatabase | null {
  const chosen: ChosenDatabase | null =
    flag !== undefined
      ? { url: flag, from: 'flag' }
      : env.STUDIO_DATABASE_URL
        ? { url: env.STUDIO_DATABASE_URL, from: 'environment' }
        : team.databaseUrl
          ? { url: team.databaseUrl, from: 'settings' }
          : null;
  if (!chosen) return null;
  const problem = databaseUrlProblem(chosen.url);
  if (problem) throw new TeamDatabaseRefused(`${SOURCE_NAMES[chosen.from]}: ${problem}`);
  return chosen;
}

const SOURCE_NAMES: Record<DatabaseSource, string> = {
  flag: '--db',
  environment: 'STUDIO_DATABASE_URL',
  settings: 'settings team.databaseUrl',
};

export type MachineNameSource = 'environment' | 'settings' | 'computer';

/** The name this machine goes by in the team database: STUDIO_MACHINE_NAME, then settings, then the computer's own. */
export function chooseMachineName(env: NodeJS.ProcessEnv, team: TeamSettings, computer: string = hostname()): { name: string; from: MachineNameSource } {
  const fromEnv = env.STUDIO_MACHINE_NAME;
  if (fromEnv) {
    const problem = machineNameProblem(fromEnv);
    if (problem) throw new TeamDatabaseRefused(`STUDIO_MACHINE_NAME: ${problem}`);
    return { name: fromEnv, from: 'environment' };
  }
  if (team.machineName) return { name: team.machineName, from: 'settings' };
  return { name: computer, from: 'computer' };
}
