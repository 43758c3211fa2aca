import { Fragment, useEffect, useState } from 'react';
import { POSSIBLY_CHARGED_WORDS } from '../../../main/api/contract.ts';
import { money, studio } from '../api.ts';
import { useAction, useLoad } from '../useLoad.ts';
import { askToNotify } from '../filmReady.ts';
import { LookedFor } from './LookedFor.tsx';
import { cheaper, ForecastRow, OfferRows } from './SameModelOffers.tsx';

/** Said after an amount: how much of it is the simulator's made-up money, which is never charged. */
export function simulatedPart(total: number, simulated: number, currency: string): string {
  if (simulated <= 0) return '';
  if (simulated >= total) return ", simulated: the simulator's made-up money, never charged";
  return `, of which ${money(simulated, currency)} simulated (never charged)`;
}

/** Always beside the storyboard: what Generate will make or reuse, what each step costs and where that figure comes from. */
export function EstimatePanel({ project, version, stale, savedAt, onSaved }: { project: string; version: number; stale: boolean; savedAt: unknown; onSaved?: () => void }) {
  const estimate = useLoad(() => (savedAt ? studio.estimate(project) : Promise.resolve(null)), [version, savedAt], project);
  const settings = useLoad(() => studio.getSettings(), []);
  const [budget, setBudget] = useState('');
  const [confirming, setConfirming] = useState(false);
  const [rebuyLost, setRebuyLost] = useState(false);
  const [confirmUnpriced, setConfirmUnpriced] = useState(false);
  // What the last Generate started, said in words until the next one.
  const [started, setStarted] = useState<string | null>(null);
  const generate = useAction();
  const move = useAction();
  const revision = (savedAt as { revision?: number } | null)?.revision ?? 0;
  // Saves the storyboard only, from the revision this estimate is of: one saved since is refused, never overwritten.
  const moveCheaper = (scene?: string) =>
    void move.run(async () => {
      await studio.moveToCheapest(project, { ...(scene ? { scene } : {}), revision });
      onSaved?.();
      estimate.reload();
    });
  const setBudgetAction = useAction();
  const e = estimate.data;
  // Once the storyboard is edited, what the last Generate started is no longer beside a price it belongs to.
  useEffect(() => {
    if (stale) setStarted(null);
  }, [stale]);
  const confirmAbove = settings.data?.confirmAbove ?? null;
  const lost = e?.steps.filter((s) => s.action === 'rebuy') ?? [];
  // A result another machine keeps is not lost: only when every such step is elsewhere does the heading say so.
  const lostHeading = lost.every((s) => s.lost?.savedOn !== undefined) ? 'Paid for, saved on another machine' : 'Paid for, result lost';
  const unpriced = e?.unpriced ?? 0;
  // Under a budget a step of unknown price is never counted as 0: the person says so explicitly first.
  const needsUnpricedConfirmation = unpriced > 0 && e?.budget !== null;

  const go = () => {
    // Asked from this click, so the person can hear when the film is ready (filmReady.ts); never on opening.
    askToNotify();
    void generate.run(async () => {
      setConfirming(false);
      setStarted(null);
      const done = await studio.generate(project, [], { rebuyLost: lost.length > 0 && rebuyLost, confirmUnpriced: needsUnpricedConfirmation && confirmUnpriced });
      const n = done.steps.filter((s) => s.action !== 'reuse').length;
      const at = new Date().toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
      setStarted(
        `The last Generate, at ${at}, started ${n} step${n === 1 ? '' : 's'} for about ${money(done.total, done.currency)}${simulatedPart(done.total, done.simulatedTotal, done.currency)}${done.unpriced > 0 ? ` plus ${done.unpriced} of unknown price` : ''}. ` +
          'The scenes fill in as each result arrives.',
      );
      setRebuyLost(false);
      setConfirmUnpriced(false);
      // A Generate saves the take numbers it made into the storyboard.
      onSaved?.();
      estimate.reload();
    });
  };

  return (
    <aside className="estimate" data-testid="estimate" aria-label="Estimate">
      <h2>Estimate</h2>
      {stale && <p className="note" data-testid="estimate-stale">{e ? 'These figures are for the storyboard as last saved: save it to price your changes.' : 'Save the storyboard to see its estimate.'}</p>}
      {estimate.error && <p className="error">{estimate.error}</p>}
      {e && (
        <>
          <table>
            <tbody>
              {e.steps.map((s) => (
                <Fragment key={s.key}>
                <tr className={s.action}>
                  <td>{s.key}</td>
                  <td>{s.action === 'new' ? s.provider : s.action === 'reuse' ? 'reuse' : s.action === 'yours' ? 'yours: nothing bought' : `buy again (${s.provider})`}</td>
                  <td className="num">
                    {s.cost === null ? <span className="warning">price unknown</span> : money(s.cost, s.currency)}
                    {s.simulated && s.action !== 'reuse' && <span className="simulated"> simulated</span>}
                    {s.keyMissing && <span className="no-key"> no key yet</span>}
                    {s.credits && <div className="credits" title={s.credits.words}>{s.credits.count} credits</div>}
                  </td>
                  <td className="source" title={s.source}>{s.source}</td>
                </tr>
                <ForecastRow step={s} />
                <OfferRows step={s} busy={move.busy || stale} move={(scene) => moveCheaper(scene)} />
                </Fragment>
              ))}
            </tbody>
          </table>
          {lost.length > 0 && (
            <section className="lost" data-testid="estimate-lost" aria-label={lostHeading}>
              <h3>{lostHeading}</h3>
              <ul>
                {lost.map((s) => (
                  <li key={s.key}>
                    {s.key}: {s.lost!.paid === 'yes' ? 'paid' : 'possibly paid'} {money(s.lost!.cost, s.lost!.currency)} (task {s.lost!.taskId}),{' '}
                    {s.lost!.savedOn === undefined ? 'result lost' : `saved on machine '${s.lost!.savedOn}', not in this machine's media folder`}: {s.lost!.why}
                    {s.lost!.looked?.length ? <LookedFor places={s.lost!.looked} /> : null}. Buying
                    it again costs about {money(s.cost, s.currency)}.
                  </li>
                ))}
              </ul>
              <label>
                <input type="checkbox" checked={rebuyLost} onChange={(ev) => setRebuyLost(ev.target.checked)} /> Buy {lost.length === 1 ? 'this step' : `these ${lost.length} steps`} again
              </label>
            </section>
          )}
          {e.steps.filter((s) => s.offers?.some(cheaper)).length > 1 && (
            <p>
              <button data-testid="move-all-cheaper" disabled={move.busy || stale} onClick={() => moveCheaper()}>
                Move every scene to its cheaper provider
              </button>
            </p>
          )}
          {move.error && <p className="error" role="alert">{move.error}</p>}
          <p className="total" data-testid="estimate-total">
            New steps: <strong>{money(e.total, e.currency)}</strong>
            {unpriced > 0 && <> plus {unpriced} of unknown price</>}
            {e.simulatedTotal > 0 && (
              <span className="simulated" data-testid="estimate-simulated">
                {' '}
                ({money(e.total - e.simulatedTotal, e.currency)} real money, {money(e.simulatedTotal, e.currency)} simulated: the simulator's made-up prices, never charged)
              </span>
            )}
            {e.otherCurrencies.length > 0 && (
              <span data-testid="estimate-other-currencies">
                ; priced in another currency, not added to it: {e.otherCurrencies.map((o) => `about ${money(o.total, o.currency)}`).join(', ')}
              </span>
            )}
          </p>
          {e.missingKeys.length > 0 && (
            <p className="warning" data-testid="estimate-missing-keys">
              Missing keys: {e.missingKeys.map((k) => k.title).join(', ')}. These steps are priced from the catalogue; add{' '}
              {e.missingKeys.length === 1 ? 'the key' : 'the keys'} in Settings (or set {e.missingKeys.map((k) => k.variable).join(', ')}) before you generate.
            </p>
          )}
          {needsUnpricedConfirmation && (
            <section className="unpriced" data-testid="estimate-unpriced">
              <p className="warning">
                {unpriced === 1 ? 'One step has' : `${unpriced} steps have`} no known price, so the budget cannot be checked for {unpriced === 1 ? 'it' : 'them'}. Set a price for
                the model in settings.json ("prices"), or confirm here.
              </p>
              <label>
                <input type="checkbox" checked={confirmUnpriced} onChange={(ev) => setConfirmUnpriced(ev.target.checked)} /> Generate {unpriced === 1 ? 'it' : 'them'} without a known price
              </label>
            </section>
          )}
          <p>
            Already spent or possibly charged: {money(e.spent - e.spentSimulated, e.currency)}
            {e.spentSimulated > 0 && <span className="simulated">, and {money(e.spentSimulated, e.currency)} simulated (never charged)</span>}
            {e.spentUnpriced > 0 && <>, and {e.spentUnpriced} earlier step(s) of unknown price, not in that figure</>}
          </p>
          <p className="note" data-testid="estimate-possibly-charged">{POSSIBLY_CHARGED_WORDS}</p>
          {e.balances.map((b) => (
            <p key={b.provider} className={b.over ? 'warning' : 'note'} data-testid={`balance-${b.provider}`}>
              {b.provider}: {b.text}
            </p>
          ))}
          {e.shape.map((s) => (
            <p key={s} className="note" data-testid="shape-note">
              {s}
            </p>
          ))}
          {e.narration.map((n) => (
            <p key={n.scene} className={n.cutSec > 0 ? 'warning' : 'note'} data-testid={`narration-${n.scene}`}>
              {n.cutSec > 0 ? 'Narration cut: ' : 'Narration: '}
              {n.text}
            </p>
          ))}
          {e.film && (
            <p className="note film-note" data-testid="film-note">
              {e.film.text}
            </p>
          )}
          <p>
            Budget: {e.budget === null ? 'none' : money(e.budget, e.currency)}
            {e.budget !== null && (e.overBy > 0 ? <strong className="error"> · {money(e.overBy, e.currency)} over</strong> : <> · {money(e.left!, e.currency)} left after this</>)}
            {e.budget !== null && e.budgetByForecast && <small className="note"> · counted at the forecasts from past bills, above the estimates (Settings)</small>}
            {e.budget !== null && e.budgetEarlierByForecast && <small className="note"> · earlier work with no bill yet counted at its forecasts too</small>}
            {e.budget !== null && e.spentSimulated + e.simulatedTotal > 0 && <small className="simulated"> · simulated money is held against it apart from real money</small>}
          </p>
          {confirming ? (
            <div className="confirm">
              <p>
                This Generate may cost {money(e.total, e.currency)}
                {simulatedPart(e.total, e.simulatedTotal, e.currency)}
                {unpriced > 0 && <>, plus {unpriced} step(s) whose price is unknown</>}. Go ahead?
              </p>
              <button className="primary" onClick={go}>Yes, generate</button>
              <button onClick={() => setConfirming(false)}>Not now</button>
            </div>
          ) : (
            <button
              className="primary"
              data-testid="generate"
              disabled={stale || generate.busy || e.steps.every((s) => s.action === 'reuse') || (lost.length > 0 && !rebuyLost) || (needsUnpricedConfirmation && !confirmUnpriced)}
              onClick={() => ((confirmAbove !== null && e.total > confirmAbove) || unpriced > 0 ? setConfirming(true) : go())}
            >
              Generate
            </button>
          )}
          {generate.error && <p className="error" role="alert">{generate.error}</p>}
          {started && (
            <p className="started" role="status" data-testid="generate-started">
              {started}
            </p>
          )}
        </>
      )}
      <form
        className="row"
        onSubmit={(ev) => {
          ev.preventDefault();
          void setBudgetAction.run(async () => {
            await studio.setBudget(project, budget.trim() === '' ? null : Number(budget));
            estimate.reload();
          });
        }}
      >
        <input aria-label="Budget" placeholder="Budget (blank for none)" value={budget} onChange={(ev) => setBudget(ev.target.value)} />
        <button>Set budget</button>
      </form>
      {setBudgetAction.error && <p className="error">{setBudgetAction.error}</p>}
    </aside>
  );
}
