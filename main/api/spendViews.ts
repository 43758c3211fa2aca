import type { Project } from '../domain/project.ts';
import type { ModelSpend, TaskStore } from '../store/port.ts';
import { fromMicros } from '../domain/tasks/model.ts';
import { isSimulated, splitSimulated, type SpendParts } from '../domain/simulated.ts';
import type { ModelSpendView, ProviderSpendView, SpendOverview, SpendReport } from './contract.ts';

const money = (micros: number) => fromMicros(micros)!;
const csvField = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

const partsView = (p: SpendParts) => ({
  actual: money(p.actual),
  billed: money(p.billed),
  countedFromUsage: money(p.countedFromUsage),
  estimated: money(p.estimated),
  possiblyCharged: money(p.possiblyCharged),
});

function modelSpendView<T extends ModelSpend>(m: T): T & ModelSpendView {
  return { ...m, simulated: isSimulated(m.provider), billed: money(m.billed), countedFromUsage: money(m.countedFromUsage), estimatedForBilled: money(m.estimatedForBilled), estimatedOnly: money(m.estimatedOnly), possiblyCharged: money(m.possiblyCharged), queued: money(m.queued) };
}

/** A project's spend as a person reads it (from its rows per day and provider): real money, and the simulator's apart. */
export function realAndSimulated(days: ReadonlyArray<SpendParts & { provider: string }>) {
  const { real, simulated } = splitSimulated(days);
  return { spend: partsView(real), simulated: partsView(simulated) };
}

/** One project's spend: totals (real and simulated apart, and both), per day and provider, per model; in currency units. */
export async function spendReport(tasks: TaskStore, project: Project): Promise<SpendReport> {
  const total = (await tasks.spend(project.id))[0]!;
  const days = await tasks.spendByDay(project.id);
  const { real, simulated } = splitSimulated(days);
  return {
    project: project.name,
    currency: project.currency,
    totals: partsView(total),
    real: partsView(real),
    simulated: partsView(simulated),
    rows: days.map((r) => ({ ...r, simulated: isSimulated(r.provider), ...partsView(r) })),
    byModel: (await tasks.spendByModel(project.id)).map(modelSpendView),
    otherCurrencies: (await tasks.spendInOtherCurrencies(project.id)).map((c) => ({ currency: c.currency, ...partsView(c) })),
  };
}

/** "yes" on a row of the simulator's made-up money, so a sheet summing the column can leave it out. */
const simulatedField = (provider: string) => (isSimulated(provider) ? 'yes' : 'no');

/**
 * The CSV's money columns: billed is only money or credits a provider reported, counted_from_usage what it reported
 * it bills by priced at the catalogue's price; the four add up to what the project spent or may have spent.
 */
const CSV_FIGURES = 'billed,counted_from_usage,estimated,possibly_charged';

/** Spend per day and provider as CSV, for one project or (null) all of them. */
export async function spendCsv(tasks: TaskStore, project: Project | null): Promise<string> {
  if (project === null) {
    const lines = (await tasks.spendByDayAll()).map((r) =>
      [csvField(r.project), r.day, r.provider, money(r.billed), money(r.countedFromUsage), money(r.estimated), money(r.possiblyCharged), r.currency, simulatedField(r.provider)].join(','),
    );
    return [`project,day,provider,${CSV_FIGURES},currency,simulated`, ...lines].join('\n') + '\n';
  }
  const report = await spendReport(tasks, project);
  const lines = report.rows.map((r) => [r.day, r.provider, r.billed, r.countedFromUsage, r.estimated, r.possiblyCharged, report.currency, simulatedField(r.provider)].join(','));
  return [`day,provider,${CSV_FIGURES},currency,simulated`, ...lines].join('\n') + '\n';
}

function shareOf(budget: number, all: number, simulated: SpendParts): number {
  // actual is billed + counted from usage: the budget counts both.
  const sim = simulated.actual + simulated.estimated + simulated.possiblyCharged;
  return Math.max(all - sim, sim) / budget;
}

/** Every project against its budget, and spend per provider and per model across them. */
export async function spendOverview(tasks: TaskStore): Promise<SpendOverview> {
  // Per project and provider, not per day: the split of real from simulated money needs no more.
  const byProvider = await tasks.spendByProvider();
  const projects = (await tasks.spend()).map((r) => {
    const { simulated } = splitSimulated(byProvider.filter((d) => d.project === r.project));
    return {
      name: r.project,
      currency: r.currency,
      billed: money(r.billed),
      countedFromUsage: money(r.countedFromUsage),
      estimated: money(r.estimated),
      possiblyCharged: money(r.possiblyCharged),
      budget: r.budget === null ? null : money(r.budget),
      // Real and simulated money are each held against the budget apart (see budgetCheck): the share of the fuller one.
      shareUsed: r.budget === null || r.budget === 0 ? null : shareOf(r.budget, r.actual + r.estimated + r.possiblyCharged, simulated),
      simulated: partsView(simulated),
    };
  });
  const byModel = await tasks.spendByModelAll();
  const providers = new Map<string, ProviderSpendView>();
  for (const m of byModel) {
    const key = `${m.provider} ${m.currency}`;
    const p = providers.get(key) ?? { provider: m.provider, currency: m.currency, simulated: isSimulated(m.provider), billed: 0, countedFromUsage: 0, estimated: 0, possiblyCharged: 0 };
    // Summed in micro-units, converted once, so the figures do not drift.
    p.billed += m.billed;
    p.countedFromUsage += m.countedFromUsage;
    p.estimated += m.estimatedOnly;
    p.possiblyCharged += m.possiblyCharged;
    providers.set(key, p);
  }
  return {
    projects,
    byProvider: [...providers.values()].map((p) => ({ ...p, billed: money(p.billed), countedFromUsage: money(p.countedFromUsage), estimated: money(p.estimated), possiblyCharged: money(p.possiblyCharged) })),
    byModel: byModel.map(modelSpendView),
  };
}
