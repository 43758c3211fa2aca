import type { BilledRatio, CurrencySpend, DaySpend, ModelSpend, SpendRow } from '../port.ts';
import { TaskTable } from './taskTable.ts';
import { SIMULATOR } from '../../domain/simulated.ts';
import { BILL_UNITS, BILLING_PROVIDERS } from '../../domain/costBasis.ts';

const quoted = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

/**
 * A task's actual cost is the provider's bill (money or credits it reported), not counted from usage at the
 * catalogue's price; a task finished before what was reported was kept is judged by its provider (domain/costBasis.ts).
 */
const BILL = (t: string) => `coalesce(${t}billed_unit IN (${quoted(BILL_UNITS)}), ${t}provider IN (${quoted(BILLING_PROVIDERS)}))`;

/** Accepted work's actual figures (`t`: the table's prefix), as billed and counted from usage: together, the actual. */
const REPORTED = (t: string) => `coalesce(sum(CASE WHEN ${t}charged = 'yes' AND ${BILL(t)} THEN ${t}cost_actual END), 0) AS billed,
              coalesce(sum(CASE WHEN ${t}charged = 'yes' AND NOT ${BILL(t)} THEN ${t}cost_actual END), 0) AS countedFromUsage`;

/**
 * Real money and the simulator's made-up money are each held against a project's budget apart: simulated spend
 * never uses up a budget meant for money that is charged, and a budget can still be tried with the simulator.
 */
export const SAME_MONEY = `(s.provider = '${SIMULATOR}') = (tasks.provider = '${SIMULATOR}')`;

/** The simulator's made-up money in a project: spent, possibly charged or enqueued (see spend). */
const SIMULATED_SPEND = `coalesce(sum(CASE WHEN t.provider = '${SIMULATOR}' THEN
                            CASE WHEN t.charged = 'yes' THEN coalesce(t.cost_actual, t.cost_estimated, 0)
                                 WHEN t.charged = 'maybe' OR t.status IN ('PENDING', 'RUNNING') THEN coalesce(t.cost_actual, t.cost_estimated, 0)
                                 ELSE 0 END + t.cost_abandoned END), 0)`;

/** One provider's model's spend, per group of tasks (see spendByModel). */
const MODEL_SPEND = `count(*) AS tasks,
       ${REPORTED('')},
       coalesce(sum(CASE WHEN charged = 'yes' AND cost_actual IS NOT NULL THEN cost_estimated END), 0) AS estimatedForBilled,
       count(CASE WHEN charged = 'yes' AND cost_actual IS NOT NULL AND cost_estimated IS NULL THEN 1 END) AS billedUnestimated,
       coalesce(sum(CASE WHEN charged = 'yes' AND cost_actual IS NULL THEN cost_estimated END), 0) AS estimatedOnly,
       coalesce(sum(CASE WHEN charged = 'maybe' THEN coalesce(cost_actual, cost_estimated) END), 0) + sum(cost_abandoned) AS possiblyCharged,
       coalesce(sum(CASE WHEN charged = 'no' AND status IN ('PENDING', 'RUNNING') THEN cost_estimated END), 0) AS queued`;

/** Spend: what each project, day, provider and model was billed, estimated and possibly charged. */
export class TaskSpend extends TaskTable {
  /**
   * Spend per project: what the provider billed where it said, else the estimate, for accepted work;
   * requests whose outcome is unknown (and earlier attempts a person resubmitted) as possibly charged.
   */
  async spend(projectId: number | null = null): Promise<SpendRow[]> {
    return this.stmt(
      `SELECT p.id AS projectId, p.name AS project, p.currency AS currency, p.budget AS budget,
              coalesce(sum(CASE WHEN t.charged = 'yes' THEN t.cost_actual END), 0) AS actual,
              ${REPORTED('t.')},
              coalesce(sum(CASE WHEN t.charged = 'yes' AND t.cost_actual IS NULL THEN t.cost_estimated END), 0) AS estimated,
              coalesce(sum(CASE WHEN t.charged = 'maybe' THEN coalesce(t.cost_actual, t.cost_estimated) END), 0)
                + coalesce(sum(t.cost_abandoned), 0) AS possiblyCharged,
              coalesce(sum(CASE WHEN t.charged = 'no' AND t.status IN ('PENDING', 'RUNNING') THEN t.cost_estimated END), 0) AS queued,
              count(CASE WHEN t.kind <> 'render' AND t.cost_actual IS NULL AND t.cost_estimated IS NULL
                          AND (t.charged <> 'no' OR t.status IN ('PENDING', 'RUNNING')) THEN 1 END) AS unpriced,
              ${SIMULATED_SPEND} AS simulated
         FROM projects p LEFT JOIN tasks t ON t.project_id = p.id AND t.currency = p.currency
        WHERE @projectId IS NULL OR p.id = @projectId
        GROUP BY p.id ORDER BY p.id`,
    ).all({ projectId }) as SpendRow[];
  }

  /** Spend of one project per day (of the request) and provider, for the spend chart and its CSV. */
  async spendByDay(projectId: number): Promise<DaySpend[]> {
    return this.stmt(
      `SELECT date(coalesce(submitted_at, submit_started_at, created_at) / 1000, 'unixepoch') AS day, provider,
              coalesce(sum(CASE WHEN charged = 'yes' THEN cost_actual END), 0) AS actual,
              ${REPORTED('')},
              coalesce(sum(CASE WHEN charged = 'yes' AND cost_actual IS NULL THEN cost_estimated END), 0) AS estimated,
              coalesce(sum(CASE WHEN charged = 'maybe' THEN coalesce(cost_actual, cost_estimated) END), 0) + sum(cost_abandoned) AS possiblyCharged
         FROM tasks WHERE project_id = ? AND tasks.currency = (SELECT p.currency FROM projects p WHERE p.id = tasks.project_id) AND (charged <> 'no' OR cost_abandoned > 0)
        GROUP BY day, provider ORDER BY day, provider`,
    ).all(projectId) as never;
  }

  /**
   * Spend of one project per provider and model: what was billed, what those same requests had been estimated
   * at (so the estimates can be judged), what was charged with no bill, what was possibly charged, and what is
   * enqueued and not sent yet (a budget holds it, and may hold it at its model's forecast: pipeline/forecast.ts).
   */
  async spendByModel(projectId: number): Promise<ModelSpend[]> {
    return this.stmt(
      `SELECT provider, model, ${MODEL_SPEND}
         FROM tasks WHERE project_id = ? AND tasks.currency = (SELECT p.currency FROM projects p WHERE p.id = tasks.project_id) AND kind <> 'render' AND (charged <> 'no' OR cost_abandoned > 0 OR status IN ('PENDING', 'RUNNING'))
        GROUP BY provider, model ORDER BY provider, model`,
    ).all(projectId) as ModelSpend[];
  }

  /** A project's spend in each currency other than its own, kept apart: no rate is known to add it with. */
  async spendInOtherCurrencies(projectId: number): Promise<CurrencySpend[]> {
    return this.stmt(
      `SELECT t.currency AS currency,
              coalesce(sum(CASE WHEN t.charged = 'yes' THEN t.cost_actual END), 0) AS actual,
              ${REPORTED('t.')},
              coalesce(sum(CASE WHEN t.charged = 'yes' AND t.cost_actual IS NULL THEN t.cost_estimated END), 0) AS estimated,
              coalesce(sum(CASE WHEN t.charged = 'maybe' THEN coalesce(t.cost_actual, t.cost_estimated) END), 0)
                + coalesce(sum(t.cost_abandoned), 0) AS possiblyCharged,
              coalesce(sum(CASE WHEN t.charged = 'no' AND t.status IN ('PENDING', 'RUNNING') THEN t.cost_estimated END), 0) AS queued
         FROM tasks t JOIN projects p ON p.id = t.project_id AND t.currency <> p.currency
        WHERE t.project_id = ? AND (t.charged <> 'no' OR t.cost_abandoned > 0 OR t.status IN ('PENDING', 'RUNNING'))
        GROUP BY t.currency ORDER BY t.currency`,
    ).all(projectId) as CurrencySpend[];
  }

  // ---- Spend across projects ---------------------------------------------------------------

  /** spendByModel over every project, per currency (projects may keep different ones). */
  async spendByModelAll(): Promise<(ModelSpend & { currency: string })[]> {
    return this.stmt(
      `SELECT provider, model, currency, ${MODEL_SPEND}
         FROM tasks WHERE kind <> 'render' AND (charged <> 'no' OR cost_abandoned > 0 OR status IN ('PENDING', 'RUNNING'))
        GROUP BY provider, model, currency ORDER BY provider, model, currency`,
    ).all() as (ModelSpend & { currency: string })[];
  }

  /** Billed against estimated per provider, model and currency, over every run that has both (see BilledRatio). */
  async billedRatios(): Promise<BilledRatio[]> {
    return this.stmt(
      `SELECT provider, model, currency, count(*) AS runs, sum(cost_actual) AS billed, sum(cost_estimated) AS estimated
         FROM tasks WHERE charged = 'yes' AND cost_actual IS NOT NULL AND cost_estimated > 0
        GROUP BY provider, model, currency ORDER BY provider, model, currency`,
    ).all() as BilledRatio[];
  }

  /** spendByDay over every project, with each row's project, for the CSV of all projects. */
  async spendByDayAll(): Promise<(DaySpend & { project: string; currency: string })[]> {
    return this.stmt(
      `SELECT p.name AS project, p.currency AS currency,
              date(coalesce(t.submitted_at, t.submit_started_at, t.created_at) / 1000, 'unixepoch') AS day, t.provider AS provider,
              coalesce(sum(CASE WHEN t.charged = 'yes' THEN t.cost_actual END), 0) AS actual,
              ${REPORTED('t.')},
              coalesce(sum(CASE WHEN t.charged = 'yes' AND t.cost_actual IS NULL THEN t.cost_estimated END), 0) AS estimated,
              coalesce(sum(CASE WHEN t.charged = 'maybe' THEN coalesce(t.cost_actual, t.cost_estimated) END), 0) + sum(t.cost_abandoned) AS possiblyCharged
         FROM tasks t JOIN projects p ON p.id = t.project_id AND t.currency = p.currency WHERE t.charged <> 'no' OR t.cost_abandoned > 0
        GROUP BY p.id, day, t.provider ORDER BY p.name, day, t.provider`,
    ).all() as never;
  }

  /** Spend of every project per provider, for the project list (no day: one row per project and provider). */
  async spendByProvider(): Promise<(Omit<DaySpend, 'day'> & { project: string })[]> {
    return this.stmt(
      `SELECT p.name AS project, t.provider AS provider,
              coalesce(sum(CASE WHEN t.charged = 'yes' THEN t.cost_actual END), 0) AS actual,
              ${REPORTED('t.')},
              coalesce(sum(CASE WHEN t.charged = 'yes' AND t.cost_actual IS NULL THEN t.cost_estimated END), 0) AS estimated,
              coalesce(sum(CASE WHEN t.charged = 'maybe' THEN coalesce(t.cost_actual, t.cost_estimated) END), 0) + sum(t.cost_abandoned) AS possiblyCharged
         FROM tasks t JOIN projects p ON p.id = t.project_id AND t.currency = p.currency WHERE t.charged <> 'no' OR t.cost_abandoned > 0
        GROUP BY p.id, t.provider ORDER BY p.name, t.provider`,
    ).all() as never;
  }
}
