import { useState } from 'react';
import type { SettingsPatch } from '../../../main/api/contract.ts';

/** fal's admin key, under fal's own key: optional, only for reading fal's bills from its usage records. */
export function FalAdminKey({ set, apply }: { set: boolean; apply: (patch: SettingsPatch, saved?: () => void) => void }) {
  const [draft, setDraft] = useState('');
  return (
    <>
      <div className="row">
        <label htmlFor="fal-admin-key">fal admin key (optional)</label>
        <span className="note">{set ? 'set (settings)' : 'not set'}</span>
        <input id="fal-admin-key" type="password" autoComplete="off" aria-label="fal admin key" value={draft} onChange={(e) => setDraft(e.target.value)} />
        <button disabled={!draft} onClick={() => apply({ falAdminKey: draft }, () => setDraft(''))}>
          Save admin key
        </button>
        {set ? <button onClick={() => apply({ falAdminKey: null })}>Remove</button> : null}
      </div>
      <p className="note" data-testid="fal-admin-key-use">
        fal reports no cost with a result, so fal's figures are estimates. With an ADMIN-scope key (made in fal's dashboard under API keys), the
        studio reads fal's usage records when you open Spend, and shows a request as billed where those records show its charge alone;
        it never generates anything with this key.
      </p>
    </>
  );
}
