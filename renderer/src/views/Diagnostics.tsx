import { useState } from 'react';
import { studio } from '../api.ts';

type State = { kind: 'idle' | 'busy' | 'copied' } | { kind: 'shown'; text: string; why: string } | { kind: 'failed'; error: string };

/**
 * "Copy diagnostics": what a person sends when something went wrong (studio.diagnostics). It goes to the clipboard;
 * where the page may not write there (a browser that refuses, an insecure address), the text is shown to copy by hand.
 */
export function Diagnostics() {
  const [state, setState] = useState<State>({ kind: 'idle' });
  const copy = async () => {
    setState({ kind: 'busy' });
    let text: string;
    try {
      text = await studio.diagnostics();
    } catch (e) {
      setState({ kind: 'failed', error: (e as Error).message });
      return;
    }
    try {
      await navigator.clipboard.writeText(text);
      setState({ kind: 'copied' });
    } catch (e) {
      setState({ kind: 'shown', text, why: (e as Error).message.replace(/\.$/, '') || 'it was refused' });
    }
  };
  return (
    <div className="diagnostics">
      <h3>Diagnostics</h3>
      <p className="note">
        When something goes wrong, this copies what helps find out why: the versions, the folders, what the engine is doing and the last 200 lines of
        the log. Keys are cut out of it, and prompts too unless you asked for them in the logs. Read it before you send it.
      </p>
      <div className="row">
        <button onClick={() => void copy()} disabled={state.kind === 'busy'}>
          Copy diagnostics
        </button>
        {state.kind === 'copied' && (
          <span className="note" role="status">
            Copied
          </span>
        )}
      </div>
      {state.kind === 'shown' && (
        <>
          <p className="note" role="status">
            The clipboard could not be used ({state.why}). Select the text below and copy it.
          </p>
          <textarea readOnly aria-label="Diagnostics" rows={14} value={state.text} onFocus={(e) => e.currentTarget.select()} />
        </>
      )}
      {state.kind === 'failed' && (
        <p className="error" role="alert">
          {state.error}
        </p>
      )}
    </div>
  );
}
