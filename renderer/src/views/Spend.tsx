import { amountWords, BASIS_WORDS, POSSIBLY_CHARGED_WORDS, type ModelSpendView, type SpendOverview, type SpendRowView, type SpendTotals } from '../../../main/api/contract.ts';
import { money, studio } from '../api.ts';
import { useAction, useLoad } from '../useLoad.ts';

/** A figure in the projects' table, whose currency has a column of its own so the table fits a small window. */
const figure = (amount: number) => amountWords(amount);

/** Saves text as a file through the browser's download. */
function saveText(text: string, name: string): void {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
  a.download = name;
  a.click();
  URL.revokeObjectURL(a.href);
}

/**
 * How far the figures of a model's requests (billed, or counted from usage) are from what they were estimated at:
 * "+12%" means the estimates ran low.
 */
export function billedAgainstEstimate(m: Pick<ModelSpendView, 'billed' | 'countedFromUsage' | 'estimatedForBilled'>): string {
  const actual = m.billed + m.countedFromUsage;
  if (actual === 0 && m.estimatedForBilled === 0) return '–';
  if (m.estimatedForBilled === 0) return 'no estimate';
  const diff = (actual - m.estimatedForBilled) / m.estimatedForBilled;
  const pct = Math.round(diff * 100);
  return pct === 0 ? 'as estimated' : `${pct > 0 ? '+' : ''}${pct}% ${pct > 0 ? '(estimates ran low)' : '(estimates ran high)'}`;
}

/** The parts a bar is stacked of, in order; billed and counted from usage together are the figures providers reported. */
const PARTS = [
  { key: 'billed', label: 'billed', className: 'actual' },
  { key: 'countedFromUsage', label: 'counted from usage', className: 'counted' },
  { key: 'estimated', label: 'estimated', className: 'estimated' },
  { key: 'possiblyCharged', label: 'possibly charged', className: 'possiblyCharged' },
] as const;

/** Horizontal bars, one per provider, stacked like the day chart, each with its amount written beside it. */
function ProviderChart({ rows }: { rows: SpendOverview['byProvider'] }) {
  const max = Math.max(0.01, ...rows.map((r) => r.billed + r.countedFromUsage + r.estimated + r.possiblyCharged));
  const w = 360;
  const h = 26;
  return (
    <svg className="chart" width={w + 380} height={rows.length * (h + 8) + 8} role="img" aria-label="Spend per provider over every project">
      {rows.map((r, i) => {
        let x = 0;
        const total = r.billed + r.countedFromUsage + r.estimated + r.possiblyCharged;
        return (
          <g key={`${r.provider} ${r.currency}`} transform={`translate(0,${4 + i * (h + 8)})`} className={r.simulated ? 'simulated' : undefined} data-testid={`provider-bar-${r.provider}`}>
            <text x={0} y={h / 2 + 4} className={r.simulated ? 'simulated' : undefined}>
              {r.simulated ? `${r.provider} (simulated)` : r.provider}
            </text>
            <g transform="translate(150,0)">
              {PARTS.map(({ key, label, className }) => {
                const part = (r[key] / max) * w;
                const at = x;
                x += part;
                return part > 0 ? (
                  <rect key={key} className={className} x={at} y={0} width={part} height={h}>
                    <title>{`${label}: ${money(r[key], r.currency)}`}</title>
                  </rect>
                ) : null;
              })}
              <text x={x + 6} y={h / 2 + 4} className="value">
                {money(total, r.currency)}
                {r.simulated ? ' simulated, never charged' : ''}
              </text>
            </g>
          </g>
        );
      })}
    </svg>
  );
}

/** Per provider and model: what was billed against what the same requests had been estimated at. */
function ModelTable({ rows, testId }: { rows: (ModelSpendView & { currency: string })[]; testId: string }) {
  return (
    // Eight columns: in a small window the table scrolls sideways rather than cutting its last columns off.
    <div className="table-scroll">
      <table className="by-model" data-testid={testId}>
        <thead>
          <tr>
            <th>Model</th>
            <th>Tasks</th>
            <th>Billed</th>
            <th>Counted from usage</th>
            <th>Estimated for those</th>
            <th>Against estimate</th>
            <th>Charged, no bill (estimate)</th>
            <th>Possibly charged</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((m) => (
            <tr key={`${m.provider} ${m.model} ${m.currency}`} className={m.simulated ? 'simulated' : undefined}>
              <td>
                {m.provider} {m.model}
                {m.simulated && <small> (simulated, never charged)</small>}
              </td>
              <td className="num">{m.tasks}</td>
              <td className="num">{money(m.billed, m.currency)}</td>
              <td className="num">{money(m.countedFromUsage, m.currency)}</td>
              <td className="num">
                {money(m.estimatedForBilled, m.currency)}
                {m.billedUnestimated > 0 && <small> ({m.billedUnestimated} had no estimate)</small>}
              </td>
              <td className="num">{billedAgainstEstimate(m)}</td>
              <td className="num">{money(m.estimatedOnly, m.currency)}</td>
              <td className="num">{money(m.possiblyCharged, m.currency)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Every project against its budget, and spend per provider and per model over all of them. */
function Overview({ version }: { version: number }) {
  const overview = useLoad(() => studio.spendOverview(), [version]);
  const exporting = useAction();
  const o = overview.data;
  return (
    <section className="overview" aria-labelledby="spend-all-title">
      <h2 id="spend-all-title">All projects</h2>
      {/* A project's figures include the simulator's: real money is shown without them, the simulated apart (main/domain/simulated.ts). */}
      {overview.error && <p className="error">{overview.error}</p>}
      {o && (
        <>
          <table className="by-model" data-testid="spend-projects">
            <thead>
              <tr>
                <th rowSpan={2}>Project</th>
                <th rowSpan={2}>Currency</th>
                <th colSpan={4}>Real money</th>
                <th rowSpan={2} className="simulated">Simulated (never charged)</th>
                <th rowSpan={2}>Budget</th>
                <th rowSpan={2}>Used</th>
              </tr>
              <tr>
                <th>Billed</th>
                <th>Counted from usage</th>
                <th>Estimated (no bill yet)</th>
                <th>Possibly charged</th>
              </tr>
            </thead>
            <tbody>
              {o.projects.map((p) => (
                <tr key={p.name}>
                  <td>{p.name}</td>
                  <td>{p.currency}</td>
                  <td className="num" data-testid={`spend-real-billed-${p.name}`}>{figure(p.billed - p.simulated.billed)}</td>
                  <td className="num" data-testid={`spend-real-counted-${p.name}`}>{figure(p.countedFromUsage - p.simulated.countedFromUsage)}</td>
                  <td className="num">{figure(p.estimated - p.simulated.estimated)}</td>
                  <td className="num">{figure(p.possiblyCharged - p.simulated.possiblyCharged)}</td>
                  {/* One column: the simulator's money is never charged, and the project's own view breaks it down. */}
                  <td
                    className="num simulated"
                    data-testid={`spend-simulated-${p.name}`}
                    title={`billed ${figure(p.simulated.actual)}, estimated ${figure(p.simulated.estimated)}, possibly charged ${figure(p.simulated.possiblyCharged)}`}
                  >
                    {figure(p.simulated.actual + p.simulated.estimated + p.simulated.possiblyCharged)}
                  </td>
                  <td className="num">{p.budget === null ? 'none' : figure(p.budget)}</td>
                  <td className="num">
                    {p.shareUsed === null ? (
                      p.budget === 0 && p.billed + p.countedFromUsage + p.estimated + p.possiblyCharged > 0 ? 'over' : '–'
                    ) : (
                      <>
                        <meter min={0} max={1} low={0.75} high={0.9} optimum={0} value={Math.min(1, p.shareUsed)} aria-label={`${p.name}: share of the budget used`} />{' '}
                        {Math.round(p.shareUsed * 100)}%
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {o.byProvider.length > 0 && (
            <>
              <h3>Per provider</h3>
              <ProviderChart rows={o.byProvider} />
            </>
          )}
          {o.byModel.length > 0 && (
            <>
              <h3>Per model: billed against estimated</h3>
              <ModelTable rows={o.byModel} testId="spend-models-all" />
            </>
          )}
          <button onClick={() => void exporting.run(async () => saveText(await studio.spendCsv(null), 'all projects spend.csv'))}>Export CSV of all projects</button>
          {exporting.error && <p className="error">{exporting.error}</p>}
        </>
      )}
    </section>
  );
}

/** A bar per day and provider, stacked: billed, counted from usage, estimated, possibly charged. */
function Chart({ rows, currency }: { rows: SpendRowView[]; currency: string }) {
  const max = Math.max(0.01, ...rows.map((r) => r.actual + r.estimated + r.possiblyCharged));
  const w = 56;
  const h = 180;
  return (
    <svg className="chart" width={Math.max(320, rows.length * (w + 12) + 40)} height={h + 70} role="img" aria-label="Spend per day and provider">
      {rows.map((r, i) => {
        let y = h;
        return (
          <g key={`${r.day}-${r.provider}`} transform={`translate(${30 + i * (w + 12)},20)`} className={r.simulated ? 'simulated' : undefined}>
            {PARTS.map(({ key, label, className }) => {
              const part = (r[key] / max) * h;
              y -= part;
              return part > 0 ? (
                <rect key={key} className={className} x={0} y={y} width={w} height={part}>
                  <title>{`${label}: ${money(r[key], currency)}`}</title>
                </rect>
              ) : null;
            })}
            <text x={w / 2} y={y - 4} textAnchor="middle" className="value">{amountWords(r.actual + r.estimated + r.possiblyCharged)}</text>
            <text x={w / 2} y={h + 16} textAnchor="middle">{r.day.slice(5)}</text>
            <text x={w / 2} y={h + 30} textAnchor="middle" className={r.simulated ? 'provider simulated' : 'provider'}>
              {r.simulated ? `${r.provider} (sim.)` : r.provider}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

/** Billed, counted from usage, estimated and possibly charged, for real money or (marked) for the simulator's. */
function Totals({ parts, currency, testId, simulated = false }: { parts: SpendTotals; currency: string; testId: string; simulated?: boolean }) {
  const mark = simulated ? ' (simulated)' : '';
  return (
    <div className={simulated ? 'totals simulated' : 'totals'} data-testid={testId}>
      <div>
        <span>Billed{mark}</span>
        <strong data-testid={`${testId}-billed`}>{money(parts.billed, currency)}</strong>
      </div>
      <div>
        <span>Counted from usage{mark}</span>
        <strong data-testid={`${testId}-counted`}>{money(parts.countedFromUsage, currency)}</strong>
      </div>
      <div>
        <span>Estimated (no bill yet){mark}</span>
        <strong>{money(parts.estimated, currency)}</strong>
      </div>
      <div>
        <span>Possibly charged{mark}</span>
        <strong>{money(parts.possiblyCharged, currency)}</strong>
      </div>
    </div>
  );
}

export function SpendView({ project, version }: { project: string; version: number }) {
  const report = useLoad(() => studio.spend(project), [version], project);
  const exporting = useAction();
  const r = report.data;
  const download = () => void exporting.run(async () => saveText(await studio.spendCsv(project), `${project} spend.csv`));
  return (
    <section className="spend">
      <Overview version={version} />
      <h2>Spend of {project}</h2>
      {report.error && <p className="error">{report.error}</p>}
      {r && (
        <>
          <h3>Real money</h3>
          <Totals testId="spend-totals" parts={r.real} currency={r.currency} />
          {r.bills
            ?.filter((b) => b.state !== 'off')
            .map((b) => (
              <p key={b.provider} className={b.state === 'failed' ? 'warning' : 'note'} data-testid={`spend-bills-${b.provider}`}>
                {b.message}
              </p>
            ))}
          {r.simulated.actual + r.simulated.estimated + r.simulated.possiblyCharged > 0 && (
            <>
              <h3 className="simulated">Simulated: the simulator's made-up prices, never charged and not in the figures above</h3>
              <Totals testId="spend-simulated" parts={r.simulated} currency={r.currency} simulated />
            </>
          )}
          {r.otherCurrencies.map((o) => (
            <div key={o.currency} data-testid={`spend-other-${o.currency}`}>
              <h3>In {o.currency}: not added to the {r.currency} figures above (two currencies are never added)</h3>
              <Totals testId={`spend-totals-${o.currency}`} parts={o} currency={o.currency} />
            </div>
          ))}
          <p className="note" data-testid="spend-basis">{BASIS_WORDS}</p>
          <p className="note" data-testid="spend-possibly-charged">{POSSIBLY_CHARGED_WORDS}</p>
          <Chart rows={r.rows} currency={r.currency} />
          <p className="legend">
            <span className="actual">■</span> billed <span className="counted">■</span> counted from usage <span className="estimated">■</span> estimated <span className="possiblyCharged">■</span> possibly charged
          </p>
          {r.byModel.length > 0 && (
            <ModelTable rows={r.byModel.map((m) => ({ ...m, currency: r.currency }))} testId="spend-by-model" />
          )}
          <button onClick={download}>Export CSV of {project}</button>
          {exporting.error && <p className="error">{exporting.error}</p>}
        </>
      )}
    </section>
  );
}
