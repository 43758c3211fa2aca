import { Fragment, useEffect, useState } from 'react';
import type { SettingsPatch, SettingsView as Settings } from '../../../main/api/contract.ts';
import { studio } from '../api.ts';
import { useAction, useLoad } from '../useLoad.ts';
import { TeamSettings } from './TeamSettings.tsx';
import { FalAdminKey } from './FalAdminKey.tsx';
import { CreditPlan } from './CreditPlan.tsx';
import { Diagnostics } from './Diagnostics.tsx';

export function SettingsView() {
  const loaded = useLoad(() => studio.getSettings(), []);
  const [s, setS] = useState<Settings | null>(null);
  const [keyDraft, setKeyDraft] = useState<Record<string, string>>({});
  const save = useAction();
  useEffect(() => setS(loaded.data ?? null), [loaded.data]);
  if (!s) return <p className="empty">{loaded.error ?? 'Loading…'}</p>;
  // What the person typed stays until the studio has saved it; a key change leaves unsaved edits elsewhere alone.
  const apply = (patch: SettingsPatch, saved?: () => void) =>
    void save.run(async () => {
      const next = await studio.saveSettings(patch);
      const keyOnly = patch.key || patch.falAdminKey !== undefined;
      setS((now) => (keyOnly && now ? { ...now, keys: next.keys, keysEncrypted: next.keysEncrypted, falAdminKey: next.falAdminKey } : next));
      saved?.();
    });

  return (
    <section className="settings">
      <h2>Settings</h2>
      <h3>Provider keys</h3>
      {!s.keysEncrypted && (
        <p className="warning" role="alert">
          Keys are stored as plain text on this machine (no keyring is available). Anyone who can read your files can read them.
        </p>
      )}
      {Object.entries(s.keys).map(([provider, source]) => (
        <Fragment key={provider}>
          <div className="row">
            <label>{provider}</label>
            <span className={source === 'unreadable' ? 'error' : 'note'}>
              {source === 'unreadable' ? 'saved, but it cannot be decrypted on this machine (its keyring changed); enter it again' : source ? `set (${source})` : 'not set'}
            </span>
            <input
              type="password"
              autoComplete="off"
              aria-label={`${provider} key`}
              value={keyDraft[provider] ?? ''}
              onChange={(e) => setKeyDraft({ ...keyDraft, [provider]: e.target.value })}
            />
            <button disabled={!keyDraft[provider]} onClick={() => apply({ key: { provider, value: keyDraft[provider]! } }, () => setKeyDraft((d) => ({ ...d, [provider]: '' })))}>Save key</button>
            {source === 'settings' || source === 'keychain' || source === 'unreadable' ? <button onClick={() => apply({ key: { provider, value: null } })}>Remove</button> : null}
          </div>
          {provider === 'fal' && <FalAdminKey set={s.falAdminKey} apply={apply} />}
        </Fragment>
      ))}
      <CreditPlan view={s.elevenlabsPlan} apply={apply} />
      <h3>Work at once, per kind</h3>
      {(Object.keys(s.concurrency) as (keyof Settings['concurrency'])[]).map((kind) => (
        <div className="row" key={kind}>
          <label>{kind}</label>
          <input type="number" aria-label={`${kind}: work at once`} min={0} max={kind === 'render' ? 1 : 32} value={s.concurrency[kind]} onChange={(e) => setS({ ...s, concurrency: { ...s.concurrency, [kind]: Number(e.target.value) } })} />
        </div>
      ))}
      <h3>Engine</h3>
      <div className="row">
        <label>Lease (seconds)</label>
        <input type="number" aria-label="Lease (seconds)" min={1} value={s.leaseMs / 1000} onChange={(e) => setS({ ...s, leaseMs: Number(e.target.value) * 1000 })} />
      </div>
      <div className="row">
        <label>Give up polling after (minutes)</label>
        <input type="number" aria-label="Give up polling after (minutes)" min={1} value={s.pollDeadlineMs / 60_000} onChange={(e) => setS({ ...s, pollDeadlineMs: Number(e.target.value) * 60_000 })} />
      </div>
      <div className="row">
        <label>ffmpeg</label>
        <span className="summary" data-testid="ffmpeg-path">{s.ffmpegPath ?? 'the bundled ffmpeg'} (set in settings.json on this machine)</span>
      </div>
      <div className="row">
        <label>Ask before a Generate above</label>
        <input type="number" aria-label="Ask before a Generate above" min={0} step={0.5} placeholder="never ask" value={s.confirmAbove ?? ''} onChange={(e) => setS({ ...s, confirmAbove: e.target.value === '' ? null : Number(e.target.value) })} />
      </div>
      <div className="row">
        <label>
          <input type="checkbox" checked={s.keepAwake} onChange={(e) => setS({ ...s, keepAwake: e.target.checked })} /> Keep the computer awake while paid work is in flight
        </label>
      </div>
      <div className="row">
        <label>
          <input type="checkbox" checked={s.budgetUsesForecast} onChange={(e) => setS({ ...s, budgetUsesForecast: e.target.checked })} /> Hold the budget to the forecast from
          past bills where a model usually bills more than its estimate
        </label>
      </div>
      {/* Updates are the desktop app's: the browser studio runs from the project's own files, updated with them. */}
      {window.studio && (
        <div className="row">
          <label>
            <input type="checkbox" checked={s.checkUpdatesAtStart} onChange={(e) => setS({ ...s, checkUpdatesAtStart: e.target.checked })} /> Look for updates (at
            start, then hourly)
          </label>
          <span className="note">
            A new version downloads in the background and installs when you quit, after any paid request in flight has finished. Off:
            nothing is checked, downloaded or installed.
          </span>
        </div>
      )}
      <button
        className="primary"
        disabled={save.busy}
        onClick={() =>
          apply({ concurrency: s.concurrency, leaseMs: s.leaseMs, pollDeadlineMs: s.pollDeadlineMs, confirmAbove: s.confirmAbove, keepAwake: s.keepAwake, budgetUsesForecast: s.budgetUsesForecast, checkUpdatesAtStart: s.checkUpdatesAtStart })
        }
      >
        Save settings
      </button>
      <p className="note">Engine settings take effect the next time the studio starts.</p>
      {save.error && <p className="error" role="alert">{save.error}</p>}
      <TeamSettings team={s.team} saved={(team) => setS((now) => (now ? { ...now, team } : now))} />
      <Diagnostics />
    </section>
  );
}
