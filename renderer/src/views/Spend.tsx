import type { SpendRowView } from '../../../main/api/contract.ts';
import { money, studio } from '../api.ts';
import { useAction, useLoad } from '../useLoad.ts';

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
    <svg className="chart" width={Math.max(320, rows.length * (w + 12) + 40)} height={h + 60} role="img" aria-label="Spend per day and provider">
      {rows.map((r, i) => {
        let y = h;
        return (
          <g key={`${r.day}-${r.provider}`} transform={`translate(${30 + i * (w + 12)},10)`}>
            {PARTS.map(([key, label]) => {
              const part = (r[key] / max) * h;
              y -= part;
              return part > 0 ? (
                <rect key={key} className={key} x={0} y={y} width={w} height={part}>
                  <title>{`${label}: ${money(r[key], currency)}`}</title>
                </rect>
              ) : null;
            })}
            <text x={w / 2} y={h + 16} textAnchor="middle">{r.day.slice(5)}</text>
            <text x={w / 2} y={h + 30} textAnchor="middle" className="provider">{r.provider}</text>
          </g>
        );
      })}
    </svg>
  );
}

export function SpendView({ project, version }: { project: string; version: number }) {
  const report = useLoad(() => studio.spend(project), [version], project);
  const exporting = useAction();
  const r = report.data;
  const download = () =>
    void exporting.run(async () => {
      const csv = await studio.spendCsv(project);
      const a = document.createElement('a');
      a.href = URL.createObjectURL(new Blob([csv], { type: 'text/csv' }));
      a.download = `${project} spend.csv`;
      a.click();
      URL.revokeObjectURL(a.href);
    });
  return (
    <section className="spend">
      <h2>Spend</h2>
      {report.error && <p className="error">{report.error}</p>}
      {r && (
        <>
          <div className="totals" data-testid="spend-totals">
            <div>
              <span>Billed</span>
              <strong>{money(r.totals.actual, r.currency)}</strong>
            </div>
            <div>
              <span>Estimated (no bill yet)</span>
              <strong>{money(r.totals.estimated, r.currency)}</strong>
            </div>
            <div>
              <span>Possibly charged</span>
              <strong>{money(r.totals.possiblyCharged, r.currency)}</strong>
            </div>
          </div>
          <Chart rows={r.rows} currency={r.currency} />
          <p className="legend">
            <span className="actual">■</span> billed <span className="estimated">■</span> estimated <span className="possiblyCharged">■</span> possibly charged
          </p>
          {r.byModel.length > 0 && (
            <table className="by-model" data-testid="spend-by-model">
              <thead>
                <tr>
                  <th>Model</th>
                  <th>Tasks</th>
                  <th>Billed</th>
                  <th>Estimated for those</th>
                  <th>Charged, no bill (estimate)</th>
                  <th>Possibly charged</th>
                </tr>
              </thead>
              <tbody>
                {r.byModel.map((m) => (
                  <tr key={`${m.provider} ${m.model}`}>
                    <td>
                      {m.provider} {m.model}
                    </td>
                    <td className="num">{m.tasks}</td>
                    <td className="num">{money(m.billed, r.currency)}</td>
                    <td className="num">
                      {money(m.estimatedForBilled, r.currency)}
                      {m.billedUnestimated > 0 && <small> ({m.billedUnestimated} had no estimate)</small>}
                    </td>
                    <td className="num">{money(m.estimatedOnly, r.currency)}</td>
                    <td className="num">{money(m.possiblyCharged, r.currency)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <button onClick={download}>Export CSV</button>
          {exporting.error && <p className="error">{exporting.error}</p>}
        </>
      )}
    </section>
  );
}
