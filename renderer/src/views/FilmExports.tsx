import type { FilmExportView } from '../../../main/api/contract.ts';
import { mediaSrc, studio } from '../api.ts';
import { askToNotify } from '../filmReady.ts';
import { useAction, useLoad } from '../useLoad.ts';
import { FileActions } from './FileActions.tsx';
import { RenderProgress } from './RenderProgress.tsx';

/** One export: what it makes and its file's name, then its progress while it is made, or its file once it is. */
function ExportRow({ made }: { made: FilmExportView }) {
  const t = made.task;
  const url = t.status === 'SUCCEEDED' && t.outputUrl ? mediaSrc(t.outputUrl) : null;
  return (
    <li className="export" data-testid={`export-${t.id}`} data-preset={made.preset}>
      <div className="export-name">
        <strong>{made.label}</strong>
        <small className="dim">{made.fileName}</small>
      </div>
      <div className="export-state">
        {t.status === 'PENDING' || t.status === 'RUNNING' ? (
          <RenderProgress task={t} what={made.label} testId={`export-progress-${t.id}`} />
        ) : url ? (
          <FileActions taskId={t.id} url={url} fileName={made.fileName} what={made.fileName} />
        ) : (
          <span className="error">{t.error ? `It failed: ${t.error}` : 'Its file is no longer here.'}</span>
        )}
      </div>
    </li>
  );
}

/**
 * The film in another shape or format (1080p, 4K, vertical, square, WebM, a GIF preview), each a render of its own
 * on this machine that buys nothing: the presets while `menu` is open (the player's "Export as…"), and the exports
 * made, with their files.
 */
export function FilmExports({ project, version, menu, onStarted }: { project: string; version: number; menu: boolean; onStarted: () => void }) {
  const renders = useLoad(() => studio.filmRenders(project), [version], project);
  const start = useAction();
  const data = renders.data;
  const presets = menu ? (data?.presets ?? []) : [];
  if (!data || (presets.length === 0 && data.exports.length === 0 && !start.error)) return null;
  return (
    <section className="film-exports" aria-label="Exports of the film" data-testid="film-exports">
      {presets.length > 0 && (
        <ul className="export-menu" aria-label="Export as">
          {presets.map((c) => (
            <li key={c.preset}>
              <button
                disabled={start.busy}
                data-preset={c.preset}
                title="Made on your machine from the film's scenes; nothing is bought"
                onClick={() => {
                  askToNotify();
                  void start.run(async () => {
                    await studio.exportFilm(project, c.preset);
                    onStarted();
                    renders.reload();
                  });
                }}
              >
                <span>{c.label}</span>
                <small>{c.use}</small>
              </button>
            </li>
          ))}
        </ul>
      )}
      {start.error && (
        <p className="error" role="alert">
          {start.error}
        </p>
      )}
      {data.exports.length > 0 && (
        <>
          <h3>Exports</h3>
          <ul className="exports" data-testid="exports">
            {data.exports.map((made) => (
              <ExportRow key={made.task.id} made={made} />
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
