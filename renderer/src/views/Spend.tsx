import { amountWords, type ModelSpendView, type SpendOverview, type SpendRowView, type SpendTotals } from '../../../main/api/contract.ts';
import { money, studio } from '../api.ts';
import { useAction, useLoad } from '../useLoad.ts';

/** Saves text as a file through the browser's download. */
function saveText(text: string, name: string): void {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
  a.download = name;
  a.click();
  URL.revokeObjectURL(a.href);
}

/** How far the bill of a model's requests is from what they were estimated at: "+12%" means the estimates ran low. */
export function billedAgainstEstimate(m: Pick<ModelSpendView, 'billed' | 'estimatedForBilled'>): string {
  if (m.billed === 0 && m.estimatedForBilled === 0) return '–';
  if (m.estimatedForBilled === 0) return 'no estimate';
  const diff = (m.billed - m.estimatedForBilled) / m.estimatedForBilled;
  const pct = Math.round(diff * 100);
  return pct === 0 ? 'as estimated' : `${pct > 0 ? '+' : ''}${pct}% ${pct > 0 ? '(estimates ran low)' : '(estimates ran high)'}`;
}

/** Horizontal bars, one per provider, stacked like the day chart, each with its amount written beside it. */
function ProviderChart({ rows }: { rows: SpendOverview['byProvider'] }) {
  const max = Math.max(0.01, ...rows.map((r) => r.billed + r.estimated + r.possiblyCharged));
  const w = 360;
  const h = 26;
  return (
    <svg className="chart" width={w + 380} height={rows.length * (h + 8) + 8} role="img" aria-label="Spend per provider over every project">
      {rows.map((r, i) => {
        let x = 0;
        const total = r.billed + r.estimated + r.possiblyCharged;
        return (
          <g key={`${r.provider} ${r.currency}`} transform={`translate(0,${4 + i * (h + 8)})`} className={r.simulated ? 'simulated' : undefined} data-testid={`provider-bar-${r.provider}`}>
            <text x={0} y={h / 2 + 4} className={r.simulated ? 'simulated' : undefined}>
              {r.simulated ? `${r.provider} (simulated)` : r.provider}
            </text>
            <g transform="translate(150,0)">
              {(['billed', 'estimated', 'possiblyCharged'] as const).map((key) => {
                const part = (r[key] / max) * w;
                const at = x;
                x += part;
                return part > 0 ? (
                  <rect key={key} className={key === 'billed' ? 'actual' : key} x={at} y={0} width={part} height={h}>
                    <title>{`${key === 'possiblyCharged' ? 'possibly charged' : key}: ${money(r[key], r.currency)}`}</title>
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
    <table className="by-model" data-testid={testId}>
      <thead>
        <tr>
          <th>Model</th>
          <th>Tasks</th>
          <th>Billed</th>
          <th>Estimated for those</th>
          <th>Billed against estimate</th>
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
                <th colSpan={3}>Real money</th>
                <th colSpan={3} className="simulated">Simulated (never charged)</th>
                <th rowSpan={2}>Budget</th>
                <th rowSpan={2}>Used</th>
              </tr>
              <tr>
                <th>Billed</th>
                <th>Estimated (no bill yet)</th>
                <th>Possibly charged</th>
                <th className="simulated">Billed</th>
                <th className="simulated">Estimated</th>
                <th className="simulated">Possibly charged</th>
              </tr>
            </thead>
            <tbody>
              {o.projects.map((p) => (
                <tr key={p.name}>
                  <td>{p.name}</td>
                  <td className="num" data-testid={`spend-real-billed-${p.name}`}>{money(p.billed - p.simulated.actual, p.currency)}</td>
                  <td className="num">{money(p.estimated - p.simulated.estimated, p.currency)}</td>
                  <td className="num">{money(p.possiblyCharged - p.simulated.possiblyCharged, p.currency)}</td>
                  <td className="num simulated" data-testid={`spend-simulated-billed-${p.name}`}>{money(p.simulated.actual, p.currency)}</td>
                  <td className="num simulated">{money(p.simulated.estimated, p.currency)}</td>
                  <td className="num simulated">{money(p.simulated.possiblyCharged, p.currency)}</td>
                  <td className="num">{p.budget === null ? 'none' : money(p.budget, p.currency)}</td>
                  <td className="num">
                    {p.shareUsed === null ? (
                      p.budget === 0 && p.billed + p.estimated + p.possiblyCharged > 0 ? 'over' : '–'
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

const PARTS = [
  ['actual', 'billed'],
  ['estimated', 'estimated'],
  ['possiblyCharged', 'possibly charged'],
] as const;

/** A bar per day and provider, stacked: billed, estimated, possibly charged. */
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
            {PARTS.map(([key, label]) => {
              const part = (r[key] / max) * h;
              y -= part;
              return part > 0 ? (
                <rect key={key} className={key} x={0} y={y} width={w} height={part}>
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

/** Billed, estimated and possibly charged, for real money or (marked) for the simulator's. */
function Totals({ parts, currency, testId, simulated = false }: { parts: SpendTotals; currency: string; testId: string; simulated?: boolean }) {
  const mark = simulated ? ' (simulated)' : '';
  return (
    <div className={simulated ? 'totals simulated' : 'totals'} data-testid={testId}>
      <div>
        <span>Billed{mark}</span>
        <strong>{money(parts.actual, currency)}</strong>
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
          {r.simulated.actual + r.simulated.estimated + r.simulated.possiblyCharged > 0 && (
            <>
              <h3 className="simulated">Simulated: the simulator's made-up prices, never charged and not in the figures above</h3>
              <Totals testId="spend-simulated" parts={r.simulated} currency={r.currency} simulated />
            </>
          )}
          <Chart rows={r.rows} currency={r.currency} />
          <p className="legend">
            <span className="actual">■</span> billed <span className="estimated">■</span> estimated <span className="possiblyCharged">■</span> possibly charged
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
