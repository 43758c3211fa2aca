import { RequestTaken, resolveUnknown, type Decision } from '../../engine/decisions.ts';
import { LookupFailed, reconcile } from '../../engine/reconciler.ts';
import { openProviders } from '../../providers/registry.ts';
import { cancelAsked, openStudio, recordJournaledRequests } from '../../studio.ts';
import { parse, taskId } from '../args.ts';
import { UsageError } from '../errors.ts';
import type { CliContext } from '../context.ts';
import { iso, table } from '../output.ts';

export async function resolve(argv: string[], ctx: CliContext) {
  const { values, positionals } = parse(
    argv,
    { adopt: { type: 'string' }, resubmit: { type: 'boolean' }, 'give-up': { type: 'boolean' }, 'even-if-running': { type: 'boolean' } },
    1,
  );
  const id = taskId(positionals[0]);
  const chosen = [values.adopt !== undefined, !!values.resubmit, !!values['give-up']].filter(Boolean).length;
  if (chosen !== 1) throw new UsageError('choose exactly one of --adopt REQUEST_ID, --resubmit or --give-up');
  if (values['even-if-running'] && !values.resubmit) throw new UsageError('--even-if-running goes with --resubmit only');
  const decision: Decision =
    values.adopt !== undefined ? { adopt: values.adopt } : values.resubmit ? { resubmit: true, evenIfRunning: !!values['even-if-running'] } : { giveUp: true };
  const studio = await openStudio(ctx.dataDir, undefined, { existing: true, database: ctx.database, media: ctx.media });
  const providers = await openProviders(studio.settings, studio.dataDir);
  try {
    await recordJournaledRequests(studio);
    let task;
    try {
      const provider = (await studio.tasks.get(id))?.provider;
      const check = { provider: provider === undefined ? undefined : providers.get(provider), queueMs: studio.settings.engine.lookup?.queueMs, flag: `studio resolve ${id} --resubmit --even-if-running` };
      task = await resolveUnknown(studio.tasks, id, decision, studio.clock.now(), check);
    } catch (err) {
      // The request id given is the mistake to fix, as with any wrong argument.
      if (err instanceof RequestTaken) throw new UsageError(err.message);
      throw err;
    }
    const what = {
      SUBMITTED: `adopted request ${task.remoteRequestId}; a worker will collect its result`,
      PENDING: 'queued again; the earlier attempt stays counted as possibly charged',
      FAILED: 'given up; it stays counted as possibly charged',
    }[task.status as 'SUBMITTED' | 'PENDING' | 'FAILED'];
    ctx.out(`task ${id}: ${what}`);
  } finally {
    await providers.close();
    await studio.close();
  }
}

export async function cancel(argv: string[], ctx: CliContext) {
  const { positionals } = parse(argv, {}, 1);
  const id = taskId(positionals[0]);
  const studio = await openStudio(ctx.dataDir, undefined, { existing: true, database: ctx.database, media: ctx.media });
  const providers = await openProviders(studio.settings, studio.dataDir);
  try {
    const { task, cancelled, providerNote } = await cancelAsked(studio, (p) => providers.get(p), id);
    const notYet = task.status === 'SUCCEEDED' ? 'not cancelled' : 'not cancelled yet';
    ctx.out(cancelled ? `task ${id}: cancelled${providerNote ? `; ${providerNote}` : ''}` : `task ${id}: ${notYet}: ${providerNote}`);
  } finally {
    await providers.close();
    await studio.close();
  }
}

export async function reconcileCommand(argv: string[], ctx: CliContext) {
  const { values, positionals } = parse(argv, { json: { type: 'boolean' } }, 1);
  const id = taskId(positionals[0]);
  const studio = await openStudio(ctx.dataDir, undefined, { existing: true, database: ctx.database, media: ctx.media });
  const providers = await openProviders(studio.settings, studio.dataDir);
  try {
    await recordJournaledRequests(studio);
    const task = await studio.tasks.get(id);
    let found;
    try {
      found = await reconcile(studio.tasks, studio.files, task && providers.get(task.provider), id, studio.clock.now(), studio.settings.engine.lookup?.queueMs);
    } catch (err) {
      if (!(err instanceof LookupFailed)) throw err;
      ctx.err(`studio: ${err.message}; nothing was changed. Try again later: studio reconcile ${id}`);
      return 1;
    }
    const { candidates, lists, listed, cut, collected } = found;
    if (values.json) {
      // An object, not the bare list: an empty list alone would read as "nothing there" while the request may
      // still be running (notListedYet) or in the part of the listing not read (cut).
      const notListedYet = listed ? { until: iso(listed.at), why: listed.why } : null;
      ctx.out(JSON.stringify({ taskId: id, candidates: candidates.map((c) => ({ ...c, createdAt: iso(c.createdAt) })), notListedYet, cut, collected }, null, 2));
      return;
    }
    // Resubmitting would buy again a step whose paid result another task is collecting.
    for (const c of collected) ctx.out(`Task ${c.taskId} collects request ${c.requestId}, paid for this step: its result is this step's (studio events ${c.taskId}).`);
    if (lists) ctx.out(`What the lookup sees: ${lists}.`);
    if (candidates.length === 0 && listed) {
      // Resubmitting now could buy a request that is still queued or running: a second charge.
      ctx.out(`No request at ${task!.provider} matches task ${id}, but it is not listed yet: ${listed.why}.`);
      ctx.out(`Look again after then: studio reconcile ${id}`);
      return;
    }
    if (candidates.length === 0 && cut) {
      ctx.out(`No request at ${task!.provider} matching task ${id} was among those read, but the listing could not be looked through whole: ${cut}.`);
      ctx.out(`Whether it was accepted cannot be told from it: look for a request made at ${iso(task!.submitStartedAt ?? task!.createdAt)} in ${task!.provider}'s dashboard.`);
      ctx.out(`Then decide: studio resolve ${id} --adopt REQUEST_ID, --resubmit or --give-up`);
      return;
    }
    if (candidates.length === 0) {
      ctx.out(`No request at ${task!.provider} matches task ${id}: it was probably never accepted.`);
      ctx.out(collected.length > 0 ? `Decide: studio resolve ${id} --give-up (task ${collected[0]!.taskId} has this step's result), or --resubmit to buy it again` : `Decide: studio resolve ${id} --resubmit (or --give-up)`);
      return;
    }
    ctx.out(table([['REQUEST ID', 'CREATED', 'STATUS', 'WHY'], ...candidates.map((c) => [c.requestId, iso(c.createdAt)!, c.status, c.why])]));
    if (cut) ctx.out(`The listing could not be looked through whole (${cut}): another request may match too.`);
    ctx.out(`Adopt one: studio resolve ${id} --adopt REQUEST_ID`);
  } finally {
    await providers.close();
    await studio.close();
  }
}
