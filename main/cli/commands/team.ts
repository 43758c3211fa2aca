import { loadSettings } from '../../config/settings.ts';
import { chooseDatabase } from '../../config/team.ts';
import { initTeamDatabase } from '../../store/postgres/migrator.ts';
import { clockWarning, comparedWith, describeOffset } from '../../engine/clockOffset.ts';
import { teamStatus } from '../../store/postgres/teamStatus.ts';
import { parse } from '../args.ts';
import { UsageError } from '../errors.ts';
import type { CliContext, Command } from '../context.ts';
import { iso, table } from '../output.ts';
import { teamPush } from './teamPush.ts';

/** The team database named by --db, else STUDIO_DATABASE_URL, else this data folder's settings. */
function teamUrl(ctx: CliContext): string {
  const chosen = chooseDatabase(ctx.database, process.env, loadSettings(ctx.dataDir).team);
  if (!chosen) throw new UsageError('name the team database with --db postgres://user:password@host:5432/studio (or set STUDIO_DATABASE_URL)');
  return chosen.url;
}

/** Creates the studio's tables in an empty database, or brings a studio one up to date; refuses any other, untouched. */
async function init(argv: string[], ctx: CliContext) {
  parse(argv, {});
  ctx.out((await initTeamDatabase(teamUrl(ctx))).message);
}

/** Which database, its schema, and the machines with a studio on it. */
async function status(argv: string[], ctx: CliContext) {
  parse(argv, {});
  const s = await teamStatus(teamUrl(ctx));
  ctx.out(`team database: ${s.where}`);
  ctx.out(`schema: ${s.version}${s.version < s.known ? ` (this studio knows ${s.known}; the first studio to join brings it up to date)` : ''}`);
  ctx.out(`durability: fsync ${s.durability.fsync}, full_page_writes ${s.durability.fullPageWrites}, synchronous_commit ${s.durability.synchronousCommit} (for the studio's sessions)`);
  ctx.out(`this computer's clock: ${comparedWith(s.clockOffset, "the database's")}`);
  const here = clockWarning(s.clockOffset);
  if (here) ctx.err(`studio: ${here}`);
  if (s.machines.length === 0) {
    ctx.out('machines: none has a studio on it now');
    return;
  }
  ctx.out("machines with a studio on it (running, or stopped without a clean exit); clock: the machine's less the database's:");
  const clock = (offset: number | null) => (offset === null ? 'not measured' : `${describeOffset(offset)}${clockWarning(offset) ? ' (set it right)' : ''}`);
  ctx.out(table([['machine', 'processes', 'since', 'clock'], ...s.machines.map((m) => [m.name, String(m.processes), iso(m.since)!, clock(m.clockOffset)])]));
}

const SUBCOMMANDS: Record<string, Command> = { init, status, push: teamPush };

/** `studio team init|status|push`: the team database itself, before and besides any studio on it, and moving a project into it. */
export async function team(argv: string[], ctx: CliContext) {
  const [name, ...rest] = argv;
  const sub = name === undefined ? undefined : SUBCOMMANDS[name];
  if (!sub) throw new UsageError(`studio team takes ${Object.keys(SUBCOMMANDS).join(' or ')}${name === undefined ? '' : `, not "${name}"`}`);
  return sub(rest, ctx);
}
