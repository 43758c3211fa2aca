import { fromMicros, STATUSES, type Status, type Task } from '../../domain/tasks/model.ts';
import { isSimulated, splitSimulated } from '../../domain/simulated.ts';
import { etaWords } from '../../engine/eta.ts';
import { renderEta } from '../../engine/renderEta.ts';
import { openStudio, type Studio } from '../../studio.ts';
import { parse, taskId } from '../args.ts';
import { UsageError } from '../errors.ts';
import type { CliContext } from '../context.ts';
import { iso, money, table, taskCost, taskJson, withCredits } from '../output.ts';
import { BASIS_WORDS, costBasis } from '../../domain/costBasis.ts';
import { POSSIBLY_CHARGED_WORDS } from '../../domain/money.ts';

async function withStudio<T>(ctx: CliContext, fn: (studio: Studio) => Promise<T>): Promise<T> {
  const studio = await openStudio(ctx.dataDir, undefined, { existing: true, database: ctx.database, media: ctx.media });
  try {
    return await fn(studio);
  } finally {
    await studio.close();
  }
}

async function projectId(studio: Studio, name: string | undefined): Promise<number | undefined> {
  if (name === undefined) return undefined;
  const project = await studio.projects.byName(name);
  if (!project) throw new UsageError(`there is no project "${name}"`);
  return project.id;
}

async function projectNames(studio: Studio): Promise<Map<number, string>> {
  return new Map((await studio.projects.list()).map((p) => [p.id, p.name]));
}

/** Tasks as `--json` gives them, with their project's name and their files. */
async function tasksJson(studio: Studio, names: ReadonlyMap<number, string>, list: readonly Task[]) {
  const json = [];
  for (const t of list) json.push(taskJson(t, names.get(t.projectId)!, await studio.tasks.outputs(t.id)));
  return json;
}

/** Each running render's time left, in words, from its progress and its claim (renderEta.ts). */
async function renderTimesLeft(studio: Studio, list: readonly Task[]): Promise<Map<number, string>> {
  const running = list.filter((t) => t.kind === 'render' && t.status === 'RUNNING');
  const claimed = await studio.tasks.claimedAt(running.map((t) => t.id));
  const now = studio.clock.now();
  const left = new Map<number, string>();
  for (const t of running) {
    const since = claimed.get(t.id);
    const eta = since === undefined ? null : renderEta(t.progress, now - since);
    if (eta) left.set(t.id, etaWords(eta));
  }
  return left;
}

export async function tasks(argv: string[], ctx: CliContext) {
  const { values } = parse(argv, { json: { type: 'boolean' }, project: { type: 'string' }, status: { type: 'string' } });
  const status = values.status?.toUpperCase();
  if (status !== undefined && !(STATUSES as readonly string[]).includes(status)) {
    throw new UsageError(`--status must be one of ${STATUSES.join(', ')}`);
  }
  await withStudio(ctx, async (studio) => {
    const names = await projectNames(studio);
    const list = await studio.tasks.list({ projectId: await projectId(studio, values.project), status: status as Status | undefined });
    if (values.json) {
      ctx.out(JSON.stringify(await tasksJson(studio, names, list), null, 2));
      return;
    }
    const left = await renderTimesLeft(studio, list);
    ctx.out(
      table([
        ['ID', 'PROJECT', 'KIND', 'STATUS', 'PROVIDER', 'MODEL', 'COST', 'BASIS', 'NOTE'],
        ...list.map((t) => [
          String(t.id),
          names.get(t.projectId)!,
          t.kind,
          t.status,
          t.provider,
          t.model,
          withCredits(taskCost(t), t),
          costBasis(t),
          t.unknownReason ?? t.error ?? t.note ?? t.outputPath ?? (t.progress !== null ? `${Math.round(t.progress * 100)}%${left.has(t.id) ? ` · ${left.get(t.id)}` : ''}` : ''),
        ]),
      ]),
    );
  });
}

export async function unknown(argv: string[], ctx: CliContext) {
  const { values } = parse(argv, { json: { type: 'boolean' } });
  await withStudio(ctx, async (studio) => {
    const names = await projectNames(studio);
    const list = await studio.tasks.list({ status: 'OUTCOME_UNKNOWN' });
    if (values.json) {
      ctx.out(JSON.stringify(await tasksJson(studio, names, list), null, 2));
      return;
    }
    if (list.length === 0) {
      ctx.out('No task is waiting for a decision.');
      return;
    }
    for (const t of list) {
      // What the studio's own lookups found last: "not listed yet" is no reason to resubmit.
      const lookup = (await studio.tasks.events(t.id)).filter((e) => e.at >= (t.finishedAt ?? 0) && (e.detail as { lookup?: unknown } | null)?.lookup !== undefined).at(-1);
      ctx.out(
        [
          `task ${t.id} (${names.get(t.projectId)}, ${t.kind} on ${t.provider} ${t.model})`,
          `  sent:     ${iso(t.submitStartedAt) ?? 'unknown time'}  ${JSON.stringify(t.input)}`,
          `  why:      ${t.unknownReason}`,
          ...(lookup ? [`  lookup:   ${lookup.reason}`] : []),
          `  may cost: ${taskCost({ ...t, costActual: null })}`,
          `  decide:   studio resolve ${t.id} --adopt REQUEST_ID | --resubmit | --give-up`,
        ].join('\n'),
      );
    }
  });
}

export async function spend(argv: string[], ctx: CliContext) {
  const { values } = parse(argv, { json: { type: 'boolean' }, project: { type: 'string' } });
  await withStudio(ctx, async (studio) => {
    const only = await projectId(studio, values.project);
    const byProvider = await studio.tasks.spendByProvider();
    // Real money and the simulator's made-up money are shown apart, never summed into one figure.
    const spent = await studio.tasks.spend(only ?? null);
    const rows = await Promise.all(
      spent.map(async (r) => ({ ...r, ...splitSimulated(byProvider.filter((d) => d.project === r.project)), others: await studio.tasks.spendInOtherCurrencies(r.projectId) })),
    );
    const json = rows.map((r) => ({
      project: r.project,
      currency: r.currency,
      actual: fromMicros(r.real.actual),
      // actual's two parts: money or credits the provider reported, and what it bills by priced at the catalogue's price.
      billed: fromMicros(r.real.billed),
      countedFromUsage: fromMicros(r.real.countedFromUsage),
      estimated: fromMicros(r.real.estimated),
      possiblyCharged: fromMicros(r.real.possiblyCharged),
      total: fromMicros(r.real.actual + r.real.estimated),
      budget: fromMicros(r.budget),
      simulated: { actual: fromMicros(r.simulated.actual), billed: fromMicros(r.simulated.billed), countedFromUsage: fromMicros(r.simulated.countedFromUsage), estimated: fromMicros(r.simulated.estimated), possiblyCharged: fromMicros(r.simulated.possiblyCharged) },
      // Money in another currency than the project's: never added to the figures above.
      otherCurrencies: r.others.map((o) => ({ currency: o.currency, actual: fromMicros(o.actual), billed: fromMicros(o.billed), countedFromUsage: fromMicros(o.countedFromUsage), estimated: fromMicros(o.estimated), possiblyCharged: fromMicros(o.possiblyCharged) })),
    }));
    if (values.json) {
      ctx.out(JSON.stringify(json, null, 2));
      return;
    }
    ctx.out(
      table([
        ['PROJECT', 'BILLED', 'COUNTED FROM USAGE', 'ESTIMATED', 'TOTAL', 'POSSIBLY CHARGED'],
        ...rows.flatMap((r) => [
          [r.project, ...[r.real.billed, r.real.countedFromUsage, r.real.estimated, r.real.actual + r.real.estimated, r.real.possiblyCharged].map((m) => money(m, r.currency))],
          ...(r.simulated.actual + r.simulated.estimated + r.simulated.possiblyCharged > 0
            ? [[`${r.project}, simulated`, ...[r.simulated.billed, r.simulated.countedFromUsage, r.simulated.estimated, r.simulated.actual + r.simulated.estimated, r.simulated.possiblyCharged].map((m) => `${money(m, r.currency)} (simulated)`)]]
            : []),
        ]),
      ]),
    );
    if (rows.some((r) => r.simulated.actual + r.simulated.estimated + r.simulated.possiblyCharged > 0)) {
      ctx.out('Rows marked "simulated" are the simulator\'s made-up prices: never charged, and not in the other rows.');
    }
    for (const r of rows) {
      for (const o of r.others) {
        const all = [o.billed, o.countedFromUsage, o.estimated, o.possiblyCharged].map((m) => money(m, o.currency));
        ctx.out(`${r.project} also has money in ${o.currency}, not added to its ${r.currency} figures: ${all[0]} billed, ${all[1]} counted from usage, ${all[2]} estimated, ${all[3]} possibly charged.`);
      }
    }
    ctx.out(BASIS_WORDS);
    ctx.out(POSSIBLY_CHARGED_WORDS);
    if (only === undefined) return;
    const c = rows[0]!.currency;
    ctx.out('');
    ctx.out(
      table([
        ['MODEL', 'TASKS', 'BILLED', 'COUNTED FROM USAGE', 'ESTIMATED FOR THOSE', 'CHARGED, NO BILL', 'POSSIBLY CHARGED', 'ENQUEUED, NOT SENT'],
        ...(await studio.tasks.spendByModel(only)).map((m) => [
          `${m.provider} ${m.model}${isSimulated(m.provider) ? ' (simulated)' : ''}`,
          String(m.tasks),
          money(m.billed, c),
          money(m.countedFromUsage, c),
          `${money(m.estimatedForBilled, c)}${m.billedUnestimated ? ` (${m.billedUnestimated} had no estimate)` : ''}`,
          money(m.estimatedOnly, c),
          money(m.possiblyCharged, c),
          money(m.queued, c),
        ]),
      ]),
    );
  });
}

export async function events(argv: string[], ctx: CliContext) {
  const { positionals } = parse(argv, {}, 1);
  const id = taskId(positionals[0]);
  await withStudio(ctx, async (studio) => {
    if (!(await studio.tasks.get(id))) throw new UsageError(`there is no task ${id}`);
    ctx.out(
      table([
        ['AT', 'FROM', 'TO', 'BY', 'REASON'],
        ...(await studio.tasks.events(id)).map((e) => [iso(e.at)!, e.fromStatus ?? '', e.toStatus, e.actor, e.detail ? `${e.reason} ${JSON.stringify(e.detail)}` : e.reason]),
      ]),
    );
  });
}
