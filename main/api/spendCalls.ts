/** The StudioApi's spend calls: one project's, as CSV, and every project's against its budget. */

import { spendCsv as csv, spendOverview as overview, spendReport } from './spendViews.ts';
import type { ServiceContext } from './serviceContext.ts';
import { readBills } from './billReadings.ts';
import type { SpendOverview, SpendReport } from './contract.ts';

export async function spend(ctx: ServiceContext, project: string): Promise<SpendReport> {
  const named = await ctx.project(project);
  const bills = await readBills(ctx);
  return { ...(await spendReport(ctx.studio.tasks, named)), bills };
}

export async function spendCsv(ctx: ServiceContext, project: string | null): Promise<string> {
  return csv(ctx.studio.tasks, project === null ? null : await ctx.project(project));
}

export async function spendOverview(ctx: ServiceContext): Promise<SpendOverview> {
  await readBills(ctx);
  return overview(ctx.studio.tasks);
}
