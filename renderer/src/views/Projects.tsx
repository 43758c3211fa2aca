import { useState } from 'react';
import type { ProjectSummary } from '../../../main/api/contract.ts';
import { money, studio } from '../api.ts';
import { useAction } from '../useLoad.ts';

/** The simulator's made-up money in a project: never charged, so shown apart from what was spent. */
const simulatedOf = (p: ProjectSummary) => p.simulated.actual + p.simulated.estimated + p.simulated.possiblyCharged;

export function Projects(props: {
  projects: ProjectSummary[];
  error: string | null;
  selected: string | null;
  onSelect: (name: string) => void;
  onCreated: (name: string) => void;
}) {
  const [name, setName] = useState('');
  const create = useAction();
  return (
    <aside className="projects" aria-label="Projects">
      <h2>Projects</h2>
      {props.error && <p className="error">{props.error}</p>}
      <ul>
        {props.projects.map((p) => (
          <li key={p.id} className={p.name === props.selected ? 'selected' : ''}>
            <button className="project" aria-current={p.name === props.selected ? 'true' : undefined} onClick={() => props.onSelect(p.name)}>
              <strong>{p.name}</strong>
              <small>
                spent {money(p.spend.actual + p.spend.estimated, p.currency)}
                {p.spend.possiblyCharged > 0 && <> · possibly {money(p.spend.possiblyCharged, p.currency)}</>}
                {simulatedOf(p) > 0 && <span className="simulated" title="The simulator's made-up prices: never charged, and not in the figure before it"> · {money(simulatedOf(p), p.currency)} simulated</span>}
              </small>
            </button>
          </li>
        ))}
      </ul>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void create.run(async () => {
            const p = await studio.createProject(name);
            setName('');
            props.onCreated(p.name);
          });
        }}
      >
        <input value={name} onChange={(e) => setName(e.target.value)} placeholder="New project name" aria-label="New project name" />
        <button disabled={create.busy || !name.trim()}>Create</button>
      </form>
      {create.error && <p className="error">{create.error}</p>}
    </aside>
  );
}
