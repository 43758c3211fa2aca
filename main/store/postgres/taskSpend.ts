import type { BilledRatio, CurrencySpend, DaySpend, ModelSpend, SpendRow } from '../port.ts';
import type { TaskTable } from './taskTable.ts';
import { SIMULATOR } from '../../domain/simulated.ts';
import { BILL_UNITS, BILLING_PROVIDERS } from '../../domain/costBasis.ts';

// What projects have spent or may have spent: the budget a boundary write checks, and the spend views.

/**
 * Real money and the simulator's made-up money are each held against a project's budget apart: simulated spend
 * never uses up a budget meant for money that is charged, and a budget can still be tried with the simulator.
 */
const SAME_MONEY = `(s.provider = '${SIMULATOR}') = (tasks.provider = '${SIMULATOR}')`;

/**
 * What a project has spent or may have spent: billed, else estimated, for accepted and unknown requests; of the same
 * money as this task's (see SAME_MONEY).
 */
const PROJECT_SPEND = `(SELECT coalesce(sum(CASE WHEN s.charged <> 'no' THEN coalesce(s.cost_actual, s.cost_estimated, 0) ELSE 0 END)
                                   + sum(s.cost_abandoned), 0)
                         FROM tasks s WHERE s.project_id = tasks.project_id AND s.currency = tasks.currency AND ${SAME_MONEY})`;

/** The simulator's made-up money in a project: spent, possibly charged or enqueued (see spend). */
const SIMULATED_SPEND = `coalesce(sum(CASE WHEN t.provider = '${SIMULATOR}' THEN
                            CASE WHEN t.charged = 'yes' THEN coalesce(t.cost_actual, t.cost_estimated, 0)
                                 WHEN t.charged = 'maybe' OR t.status IN ('PENDING', 'RUNNING') THEN coalesce(t.cost_actual, t.cost_estimated, 0)
                                 ELSE 0 END + t.cost_abandoned END), 0)::bigint`;

/**
 * This task's estimate still fits in its project's budget (or the project has none). A task of unknown price (the
 * person confirmed it) is never counted as 0: it goes only while something of the budget is left. A task priced in
 * another currency than its project's budget is not sent: no rate is known to hold it against the budget with.
 */
export const WITHIN_BUDGET = `(SELECT CASE WHEN p.budget IS NULL THEN true
                                    WHEN tasks.currency <> p.currency THEN false
                                    WHEN tasks.cost_estimated IS NULL THEN ${PROJECT_SPEND} < p.budget
                                    ELSE ${PROJECT_SPEND} + tasks.cost_estimated <= p.budget END
                          FROM projects p WHERE p.id = tasks.project_id)`;

const quoted = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

/**
 * A task's actual cost is the provider's bill (money or credits it reported), not counted from usage at the
 * catalogue's price; a task finished before what was reported was kept is judged by its provider (domain/costBasis.ts).
 */
const BILL = (t: string) => `coalesce(${t}billed_unit IN (${quoted(BILL_UNITS)}), ${t}provider IN (${quoted(BILLING_PROVIDERS)}))`;

/** Accepted work's actual figures (`t`: the table's prefix), as billed and counted from usage: together, the actual. */
const REPORTED = (t: string) => `coalesce(sum(CASE WHEN ${t}charged = 'yes' AND ${BILL(t)} THEN ${t}cost_actual END), 0)::bigint AS billed,
            coalesce(sum(CASE WHEN ${t}charged = 'yes' AND NOT ${BILL(t)} THEN ${t}cost_actual END), 0)::bigint AS "countedFromUsage"`;

/** One provider's model's spend, per group of tasks (see spendByModel). */
const MODEL_SPEND = `count(*) AS tasks,
       ${REPORTED('')},
       coalesce(sum(CASE WHEN charged = 'yes' AND cost_actual IS NOT NULL THEN cost_estimated END), 0)::bigint AS "estimatedForBilled",
       count(CASE WHEN charged = 'yes' AND cost_actual IS NOT NULL AND cost_estimated IS NULL THEN 1 END) AS "billedUnestimated",
       coalesce(sum(CASE WHEN charged = 'yes' AND cost_actual IS NULL THEN cost_estimated END), 0)::bigint AS "estimatedOnly",
       (coalesce(sum(CASE WHEN charged = 'maybe' THEN coalesce(cost_actual, cost_estimated) END), 0) + sum(cost_abandoned))::bigint AS "possiblyCharged",
       coalesce(sum(CASE WHEN charged = 'no' AND status IN ('PENDING', 'RUNNING') THEN cost_estimated END), 0)::bigint AS queued`;

/**
 * Spend per project: what the provider billed where it said, else the estimate, for accepted work;
 * requests whose outcome is unknown (and earlier attempts a person resubmitted) as possibly charged.
 */
export async function spend(table: TaskTable, projectId: number | null = null): Promise<SpendRow[]> {
  return table.run<SpendRow>(
    table.sql,
    `SELECT p.id AS "projectId", p.name AS project, p.currency AS currency, p.budget AS budget,
            coalesce(sum(CASE WHEN t.charged = 'yes' THEN t.cost_actual END), 0)::bigint AS actual,
            ${REPORTED('t.')},
            coalesce(sum(CASE WHEN t.charged = 'yes' AND t.cost_actual IS NULL THEN t.cost_estimated END), 0)::bigint AS estimated,
            (coalesce(sum(CASE WHEN t.charged = 'maybe' THEN coalesce(t.cost_actual, t.cost_estimated) END), 0)
              + coalesce(sum(t.cost_abandoned), 0))::bigint AS "possiblyCharged",
            coalesce(sum(CASE WHEN t.charged = 'no' AND t.status IN ('PENDING', 'RUNNING') THEN t.cost_estimated END), 0)::bigint AS queued,
            count(CASE WHEN t.kind <> 'render' AND t.cost_actual IS NULL AND t.cost_estimated IS NULL
                        AND (t.charged <> 'no' OR t.status IN ('PENDING', 'RUNNING')) THEN 1 END) AS unpriced,
            ${SIMULATED_SPEND} AS simulated
       FROM projects p LEFT JOIN tasks t ON t.project_id = p.id AND t.currency = p.currency
      WHERE @projectId::bigint IS NULL OR p.id = @projectId::bigint
      GROUP BY p.id ORDER BY p.id`,
    { projectId },
  );
}

/** Spend of one project per day (of the request, in UTC) and provider, for the spend chart and its CSV. */
export async function spendByDay(table: TaskTable, projectId: number): Promise<DaySpend[]> {
  return table.run<DaySpend>(
    table.sql,
    `SELECT to_char(to_timestamp(coalesce(submitted_at, submit_started_at, created_at) / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, provider,
            coalesce(sum(CASE WHEN charged = 'yes' THEN cost_actual END), 0)::bigint AS actual,
            ${REPORTED('')},
            coalesce(sum(CASE WHEN charged = 'yes' AND cost_actual IS NULL THEN cost_estimated END), 0)::bigint AS estimated,
            (coalesce(sum(CASE WHEN charged = 'maybe' THEN coalesce(cost_actual, cost_estimated) END), 0) + sum(cost_abandoned))::bigint AS "possiblyCharged"
       FROM tasks WHERE project_id = @projectId::bigint AND tasks.currency = (SELECT p.currency FROM projects p WHERE p.id = tasks.project_id) AND (charged <> 'no' OR cost_abandoned > 0)
      GROUP BY 1, provider ORDER BY 1, provider`,
    { projectId },
  );
}

/**
 * Spend of one project per provider and model: what was billed, what those same requests had been estimated
 * at (so the estimates can be judged), what was charged with no bill, what was possibly charged, and what is
 * enqueued and not sent yet (a budget holds it, and may hold it at its model's forecast: pipeline/forecast.ts).
 */
export async function spendByModel(table: TaskTable, projectId: number): Promise<ModelSpend[]> {
  return table.run<ModelSpend>(
    table.sql,
    `SELECT provider, model, ${MODEL_SPEND}
       FROM tasks WHERE project_id = @projectId::bigint AND tasks.currency = (SELECT p.currency FROM projects p WHERE p.id = tasks.project_id) AND kind <> 'render' AND (charged <> 'no' OR cost_abandoned > 0 OR status IN ('PENDING', 'RUNNING'))
      GROUP BY provider, model ORDER BY provider, model`,
    { projectId },
  );
}

/** A project's spend in each currency other than its own, kept apart: no rate is known to add it with. */
export async function spendInOtherCurrencies(table: TaskTable, projectId: number): Promise<CurrencySpend[]> {
  return table.run<CurrencySpend>(
    table.sql,
    `SELECT t.currency AS currency,
            coalesce(sum(CASE WHEN t.charged = 'yes' THEN t.cost_actual END), 0)::bigint AS actual,
            ${REPORTED('t.')},
            coalesce(sum(CASE WHEN t.charged = 'yes' AND t.cost_actual IS NULL THEN t.cost_estimated END), 0)::bigint AS estimated,
            (coalesce(sum(CASE WHEN t.charged = 'maybe' THEN coalesce(t.cost_actual, t.cost_estimated) END), 0)
              + coalesce(sum(t.cost_abandoned), 0))::bigint AS "possiblyCharged",
            coalesce(sum(CASE WHEN t.charged = 'no' AND t.status IN ('PENDING', 'RUNNING') THEN t.cost_estimated END), 0)::bigint AS queued
       FROM tasks t JOIN projects p ON p.id = t.project_id AND t.currency <> p.currency
      WHERE t.project_id = @projectId::bigint AND (t.charged <> 'no' OR t.cost_abandoned > 0 OR t.status IN ('PENDING', 'RUNNING'))
      GROUP BY t.currency ORDER BY t.currency`,
    { projectId },
  );
}

// ---- Spend across projects ---------------------------------------------------------------

/** spendByModel over every project, per currency (projects may keep different ones). */
export async function spendByModelAll(table: TaskTable): Promise<(ModelSpend & { currency: string })[]> {
  return table.run<ModelSpend & { currency: string }>(
    table.sql,
    `SELECT provider, model, currency, ${MODEL_SPEND}
       FROM tasks WHERE kind <> 'render' AND (charged <> 'no' OR cost_abandoned > 0 OR status IN ('PENDING', 'RUNNING'))
      GROUP BY provider, model, currency ORDER BY provider, model, currency`,
  );
}

/** Billed against estimated per provider, model and currency, over every run that has both (see BilledRatio). */
export async function billedRatios(table: TaskTable): Promise<BilledRatio[]> {
  return table.run<BilledRatio>(
    table.sql,
    `SELECT provider, model, currency, count(*) AS runs, sum(cost_actual)::bigint AS billed, sum(cost_estimated)::bigint AS estimated
       FROM tasks WHERE charged = 'yes' AND cost_actual IS NOT NULL AND cost_estimated > 0
      GROUP BY provider, model, currency ORDER BY provider, model, currency`,
  );
}

/** spendByDay over every project, with each row's project, for the CSV of all projects. */
export async function spendByDayAll(table: TaskTable): Promise<(DaySpend & { project: string; currency: string })[]> {
  return table.run<DaySpend & { project: string; currency: string }>(
    table.sql,
    `SELECT p.name AS project, p.currency AS currency,
            to_char(to_timestamp(coalesce(t.submitted_at, t.submit_started_at, t.created_at) / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
            t.provider AS provider,
            coalesce(sum(CASE WHEN t.charged = 'yes' THEN t.cost_actual END), 0)::bigint AS actual,
            ${REPORTED('t.')},
            coalesce(sum(CASE WHEN t.charged = 'yes' AND t.cost_actual IS NULL THEN t.cost_estimated END), 0)::bigint AS estimated,
            (coalesce(sum(CASE WHEN t.charged = 'maybe' THEN coalesce(t.cost_actual, t.cost_estimated) END), 0) + sum(t.cost_abandoned))::bigint AS "possiblyCharged"
       FROM tasks t JOIN projects p ON p.id = t.project_id AND t.currency = p.currency WHERE t.charged <> 'no' OR t.cost_abandoned > 0
      GROUP BY p.id, 3, t.provider ORDER BY p.name, 3, t.provider`,
  );
}

/** Spend of every project per provider, for the project list (no day: one row per project and provider). */
export async function spendByProvider(table: TaskTable): Promise<(Omit<DaySpend, 'day'> & { project: string })[]> {
  return table.run<Omit<DaySpend, 'day'> & { project: string }>(
    table.sql,
    `SELECT p.name AS project, t.provider AS provider,
            coalesce(sum(CASE WHEN t.charged = 'yes' THEN t.cost_actual END), 0)::bigint AS actual,
            ${REPORTED('t.')},
            coalesce(sum(CASE WHEN t.charged = 'yes' AND t.cost_actual IS NULL THEN t.cost_estimated END), 0)::bigint AS estimated,
            (coalesce(sum(CASE WHEN t.charged = 'maybe' THEN coalesce(t.cost_actual, t.cost_estimated) END), 0) + sum(t.cost_abandoned))::bigint AS "possiblyCharged"
       FROM tasks t JOIN projects p ON p.id = t.project_id AND t.currency = p.currency WHERE t.charged <> 'no' OR t.cost_abandoned > 0
      GROUP BY p.id, t.provider ORDER BY p.name, t.provider`,
  );
}
