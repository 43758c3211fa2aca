/** Why a Generate enqueued nothing: each refusal names what to fix, and carries the steps it is about. */
import { moneyWords } from '../domain/money.ts';
import type { MoneyUse } from '../domain/simulated.ts';
import { StaleStoryboard } from '../domain/storyboardRevision.ts';
import { lookedFor } from '../media/outputWords.ts';
import { missingKeysWords, type MissingKeyNote } from './missingKeys.ts';
import type { LostResult, StepEstimate } from './estimate.ts';

export class GenerateRefused extends Error {}

/**
 * The storyboard was saved (another tab's edit, a pick, another Generate's new take) after this Generate read it:
 * enqueueing what it priced, or saving its new take over that, would undo the other change. A conflict (409, exit 2).
 */
export class GenerateStale extends StaleStoryboard {
  constructor(project: string, from: number, current: number) {
    super(project, from, current);
    this.message = `the storyboard of "${project}" changed while this Generate was being priced (from revision ${from} to ${current}); nothing was enqueued, try again`;
  }
}

/** A Generate whose new steps need keys that are not set: the price is known, the purchase waits for the keys. */
export class MissingKeysRefused extends GenerateRefused {
  constructor(readonly keys: MissingKeyNote[]) {
    super(`no API key yet for ${missingKeysWords(keys)}; add ${keys.length === 1 ? 'it' : 'them'} and generate again. Nothing was enqueued.`);
  }
}

export const money = moneyWords;

/** A budgeted Generate with steps priced in another currency than the budget's: no rate is known to add them with. */
export class OtherCurrencyRefused extends GenerateRefused {
  constructor(others: { currency: string; total: number }[], currency: string) {
    const priced = others.map((o) => `about ${money(o.total, o.currency)}`).join(' and ');
    super(`steps of this Generate are priced in another currency than the budget's ${currency} (${priced}), and two currencies are never added: remove the budget or choose models priced in ${currency}; nothing was enqueued.`);
  }
}

/** Which figures of a budget check were counted at the forecasts from past bills, above their estimates, in one clause. */
export function forecastWords(by: { steps: boolean; earlier: boolean }): string {
  if (by.steps && by.earlier) return 'counted at the forecasts from past bills, above the estimates, for this Generate and for earlier work with no bill yet too';
  return by.earlier ? 'earlier work with no bill yet counted at the forecasts from past bills, above its estimates' : 'counted at the forecast from past bills, above the estimate';
}

/**
 * A Generate that would take the project past its budget. Real money and the simulator's made-up money are each
 * held against the budget on its own (budgetCheck in simulated.ts), so each kind is said apart, its own sum beside
 * it: never one figure that adds the two.
 */
export class OverBudgetRefused extends GenerateRefused {
  /**
   * `byForecast`: the new steps (`steps`), and the project's earlier work with no bill yet (`earlier`, in what was
   * already spent), were held at their forecasts from past bills, not their estimates (settings "budgetUsesForecast").
   */
  constructor(budget: number, real: MoneyUse, simulated: MoneyUse, currency: string, byForecast = { steps: false, earlier: false }) {
    const m = (micros: number) => money(micros, currency);
    const kinds = [
      { name: 'real money', use: real },
      { name: "simulated money (the simulator's made-up prices, never charged)", use: simulated },
    ].filter((k) => k.use.spent + k.use.added > 0);
    const over = (k: (typeof kinds)[number]) => k.use.spent + k.use.added - budget;
    const said =
      kinds.length === 1
        ? `this Generate would cost about ${m(kinds[0]!.use.added)}${kinds[0]!.use === simulated ? ` of ${kinds[0]!.name}` : ''}; with ${m(kinds[0]!.use.spent)} already spent, ` +
          `possibly charged or enqueued, that is ${m(over(kinds[0]!))} over the budget of ${m(budget)}`
        : `this Generate would go over the budget of ${m(budget)}, which holds real money and simulated money each on its own: ` +
          kinds
            // A kind this Generate adds nothing to is not judged (budgetCheck), whatever it has spent.
            .map((k) =>
              k.use.added === 0
                ? `${k.name}, ${m(k.use.spent)} already spent, possibly charged or enqueued (not judged: this Generate adds none)`
                : `${k.name}, about ${m(k.use.added)} new with ${m(k.use.spent)} already spent, possibly charged or enqueued, comes to ${m(k.use.spent + k.use.added)}, ${over(k) > 0 ? `${m(over(k))} over it` : 'within it'}`,
            )
            .join('; ');
    const forecast = byForecast.steps || byForecast.earlier ? ` (${forecastWords(byForecast)}, as settings "budgetUsesForecast" asks)` : '';
    super(`${said}${forecast}. Raise the budget or change the storyboard; nothing was enqueued.`);
  }
}

/**
 * "paid, result lost" (or "possibly paid", or "result not on this machine" when another machine keeps it), with
 * the earlier task, its cost and how the result was lost or where it is.
 */
export function describeLost(lost: LostResult): string {
  const result = lost.savedOn === undefined ? 'result lost' : 'result not on this machine';
  const looked = lost.looked ? `, ${lookedFor(lost.looked)}` : '';
  return `${lost.paid === 'yes' ? 'paid' : 'possibly paid'}, ${result}: task ${lost.taskId} cost ${money(lost.cost, lost.currency)} (${lost.why})${looked}`;
}

/** A Generate that would buy again a step whose paid result was lost, without the person saying so. */
export class LostResultsRefused extends GenerateRefused {
  constructor(readonly steps: StepEstimate[]) {
    super(
      `${steps.map((s) => `${s.key} was ${describeLost(s.lost!)}`).join('; ')}. ` +
        `Buying ${steps.length === 1 ? 'it' : 'them'} again needs your confirmation; nothing was enqueued.`,
    );
  }
}

/** A budgeted Generate with steps of unknown price, which a budget cannot be checked against. */
export class UnpricedRefused extends GenerateRefused {
  constructor(readonly steps: StepEstimate[]) {
    const models = [...new Set(steps.map((s) => `${s.provider} ${s.model}`))].join(', ');
    super(
      `${steps.length} step${steps.length === 1 ? ' has' : 's have'} no known price (${models}), so this project's budget cannot be checked for ` +
        `${steps.length === 1 ? 'it' : 'them'}; nothing was enqueued. Set a price for the model in settings ("prices"), or confirm to go ahead without one.`,
    );
  }
}
