/** The StudioApi's spend calls: one project's, as CSV, and every project's against its budget. */

import { spendCsv as csv, spendOverview as overview, spendReport } from './spendViews.ts';
import type { ServiceContext } from './serviceContext.ts';
import type { SpendOverview, SpendReport } from './contract.ts';

export async function spend(ctx: ServiceContext, project: string): Promise<SpendReport> {
  return spendReport(ctx.studio.tasks, await ctx.project(project));
}

export async function spendCsv(ctx: ServiceContext, project: string | null): Promise<string> {
  return csv(ctx.studio.tasks, project === null ? null : await ctx.project(project));
}

export async function spendOverview(ctx: ServiceContext): Promise<SpendOverview> {
  return overview(ctx.studio.tasks);
}
