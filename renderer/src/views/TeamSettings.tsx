import { useState } from 'react';
import type { TeamChange, TeamView } from '../../../main/api/contract.ts';
import { studio } from '../api.ts';
import { useAction } from '../useLoad.ts';
import { SavedTextField } from './SavedTextField.tsx';

const FROM: Record<NonNullable<TeamView['storeFrom']>, string> = {
  flag: 'named by --db',
  environment: 'named by STUDIO_DATABASE_URL',
  settings: 'saved below',
};

/** Where the studio keeps its tasks, and the team database and machine name it uses from its next start. */
export function TeamSettings({ team, saved }: { team: TeamView; saved: (team: TeamView) => void }) {
  const [url, setUrl] = useState('');
  const [name, setName] = useState(team.savedMachineName ?? '');
  const [media, setMedia] = useState(team.savedMediaDir ?? '');
  const [done, setDone] = useState<string | null>(null);
  const save = useAction();
  const apply = (change: TeamChange, what: string, after?: () => void) =>
    void save.run(async () => {
      setDone(null);
      const next = await studio.saveTeam(change);
      saved(next.team);
      after?.();
      setDone(`${what} It takes effect when the studio restarts.`);
    });
  const inUse = team.store.kind === 'team' ? `the team database at ${team.store.where} (${FROM[team.storeFrom ?? 'settings']})` : `the database on this machine (${team.store.where})`;

  return (
    <>
      <h3>Team</h3>
      <div className="row">
        <label>Tasks are kept in</label>
        <span className="summary" data-testid="store-in-use">{inUse}</span>
      </div>
      <SavedTextField
        id="team-database"
        label="Team database"
        size={48}
        placeholder="postgres://user:password@host:5432/studio"
        value={url}
        onChange={setUrl}
        canSave={!save.busy && !!url.trim()}
        onSave={() => apply({ databaseUrl: url.trim() }, 'Team database saved.', () => setUrl(''))}
        saveLabel="Save team database"
      />
      <div className="row">
        <label />
        <span className="note" data-testid="team-database-saved">{team.databaseUrl ? `saved: ${team.databaseUrl}` : 'none saved'}</span>
        {team.databaseUrl && (
          <button disabled={save.busy} onClick={() => apply({ databaseUrl: null }, 'The database on this machine will be used.')}>
            Use this machine's database
          </button>
        )}
      </div>
      <SavedTextField
        id="machine-name"
        label="Machine name"
        size={24}
        placeholder={team.machineName}
        value={name}
        onChange={setName}
        canSave={!save.busy && name.trim() !== (team.savedMachineName ?? '')}
        onSave={() => apply({ machineName: name.trim() || null }, 'Machine name saved.')}
        saveLabel="Save machine name"
      >
        <span className="note">
          {team.machineNameFromEnvironment ? `${team.machineName}, set by STUDIO_MACHINE_NAME` : `now ${team.machineName}`}; each machine of a team needs a name of its own
        </span>
      </SavedTextField>
      <SavedTextField
        id="media-folder"
        label="Media folder"
        size={48}
        placeholder="/mnt/studio-media"
        value={media}
        onChange={setMedia}
        canSave={!save.busy && media.trim() !== (team.savedMediaDir ?? '')}
        onSave={() => apply({ mediaDir: media.trim() || null }, 'Media folder saved.')}
        saveLabel="Save media folder"
      >
        <span className="note" data-testid="media-folder-in-use">
          {team.mediaDir ? `now ${team.mediaDir}` : 'none: saved files stay in the data folder'}; the folder the team shares, where this machine mounts it, so every machine reads the files any of them saved
        </span>
      </SavedTextField>
      {done && <p className="note" role="status">{done}</p>}
      {save.error && <p className="error" role="alert">{save.error}</p>}
    </>
  );
}
