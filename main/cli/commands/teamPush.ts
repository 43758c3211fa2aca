import { chooseMachineName, chooseDatabase } from '../../config/team.ts';
import { chooseMediaDir } from '../../config/media.ts';
import { loadSettings } from '../../config/settings.ts';
import { when } from '../../domain/projectMoved.ts';
import { pushProject, PushInterrupted, PushRefused, type PushReport } from '../../team/push.ts';
import { parse } from '../args.ts';
import { UsageError } from '../errors.ts';
import type { CliContext } from '../context.ts';

function filesLine(r: PushReport): string {
  const f = r.files;
  const parts = [
    f.copied && `${f.copied} copied into the team's media folder`,
    f.there && `${f.there} already in it`,
    f.deleted && `${f.deleted} deleted by you before (their rows moved)`,
    f.missing + f.changed && `${f.missing + f.changed} not here to copy (see above)`,
  ].filter(Boolean);
  return parts.length ? `; files: ${parts.join(', ')} (${r.teamMedia})` : '';
}

/**
 * `studio team push PROJECT`: moves a project of this data folder's own database into the team database (--db,
 * else STUDIO_DATABASE_URL, else settings), with its files, and marks it moved here.
 */
export async function teamPush(argv: string[], ctx: CliContext) {
  const { positionals } = parse(argv, {}, 1);
  const name = positionals[0];
  if (!name) throw new UsageError('name the project to move: studio team push PROJECT [--db postgres://user:password@host:5432/studio]');
  const settings = loadSettings(ctx.dataDir);
  const team = chooseDatabase(ctx.database, process.env, settings.team);
  if (!team) throw new UsageError('name the team database to move it to with --db postgres://user:password@host:5432/studio (or set STUDIO_DATABASE_URL)');
  let report: PushReport;
  try {
    report = await pushProject({
      name,
      dataDir: ctx.dataDir,
      teamUrl: team.url,
      mediaDir: chooseMediaDir(ctx.media, process.env, settings.team),
      machine: chooseMachineName(process.env, settings.team).name,
      now: Date.now,
    });
  } catch (err) {
    if (err instanceof PushRefused) throw new UsageError(err.message);
    if (err instanceof PushInterrupted) {
      ctx.err(`studio: ${err.message}`);
      return 1;
    }
    throw err;
  }
  for (const problem of report.problems) ctx.err(`studio: ${problem}`);
  if (report.outcome === 'already') {
    ctx.out(`"${report.project}" moved to the team database ${report.team} on ${when(report.movedAt)} (project ${report.teamProjectId} there); nothing to do.`);
    return;
  }
  const how = report.outcome === 'finished' ? 'was already in the team database from a push cut short; the move is now finished' : 'moved';
  ctx.out(
    `"${report.project}" ${how}: project ${report.teamProjectId} in ${report.team}, with ${report.tasks} task(s) and ${report.events} event(s)${filesLine(report)}.`,
  );
  ctx.out(`Here it takes no more work: Generate, enqueue and decisions for it are refused. Work on it with --db (or STUDIO_DATABASE_URL).`);
}
