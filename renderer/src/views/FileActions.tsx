import { useState } from 'react';
import { useAction } from '../useLoad.ts';

/**
 * What can be done with a finished film's file: in the desktop app, saved elsewhere or shown in its folder; in a
 * browser, downloaded under `fileName`. `what` names it for a screen reader when several are listed.
 */
export function FileActions({ taskId, url, fileName, what }: { taskId: number; url: string; fileName: string; what?: string }) {
  const action = useAction();
  const [saved, setSaved] = useState<string | null>(null);
  const desktop = window.studio;
  return (
    <>
      {desktop ? (
        <>
          <button
            disabled={action.busy}
            aria-label={what && `Save ${what} as…`}
            onClick={() =>
              void action.run(async () => {
                const name = await desktop.saveOutputAs(taskId);
                setSaved(name && `Saved as ${name}`);
              })
            }
          >
            Save as…
          </button>
          <button disabled={action.busy} aria-label={what && `Show ${what} in its folder`} onClick={() => void action.run(() => desktop.showOutputInFolder(taskId))}>
            Show in folder
          </button>
        </>
      ) : (
        <a className="button" href={url} download={fileName} aria-label={what && `Download ${what}`}>
          Download
        </a>
      )}
      {saved && <span className="note">{saved}</span>}
      {action.error && (
        <span className="error" role="alert">
          {action.error}
        </span>
      )}
    </>
  );
}
