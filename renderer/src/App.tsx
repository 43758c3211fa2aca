import { useEffect, useState } from 'react';
import type { EngineStatus } from '../../main/api/contract.ts';
import { onChange, studio } from './api.ts';
import { useFilmReadyNotice } from './filmReady.ts';
import { HostLinkBanner } from './HostLinkBanner.tsx';
import { useLoad } from './useLoad.ts';
import { ViewBoundary } from './ViewBoundary.tsx';
import { Decisions } from './views/Decisions.tsx';
import { Projects } from './views/Projects.tsx';
import { SettingsView } from './views/Settings.tsx';
import { SpendView } from './views/Spend.tsx';
import { Library } from './views/Library.tsx';
import { StoryboardView } from './views/Storyboard.tsx';
import { TaskBoard } from './views/TaskBoard.tsx';

type Tab = 'storyboard' | 'tasks' | 'library' | 'spend' | 'settings';

/** The engine's pause, asked every few seconds: a locked database sends no change events to wait for. */
function useEnginePause(): EngineStatus['paused'] {
  const [paused, setPaused] = useState<EngineStatus['paused']>(null);
  useEffect(() => {
    let live = true;
    const ask = () =>
      studio.engineStatus().then(
        (s) => live && setPaused(s.paused),
        () => undefined,
      );
    void ask();
    const timer = setInterval(ask, 3_000);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, []);
  return paused;
}

export function App() {
  const [version, setVersion] = useState(0);
  const [needsDecision, setNeedsDecision] = useState(0);
  const [project, setProject] = useState<string | null>(null);
  const [tab, setTab] = useState<Tab>('storyboard');
  const [decisionsOpen, setDecisionsOpen] = useState(false);
  const projects = useLoad(() => studio.listProjects(), [version]);
  const paused = useEnginePause();
  // A film finished while the person works elsewhere is announced; its notification opens its storyboard.
  useFilmReadyNotice(projects.data, (name) => {
    setProject(name);
    setTab('storyboard');
  });

  useEffect(() => {
    // The first state this page hears of (version 0 is the host's placeholder before its first look) is its
    // start-up: anything waiting for a decision is put in front of the person then, however much the engine
    // did before the page connected. A studio that started again behind an open tab is such a start too.
    let first = true;
    return onChange((e, restarted) => {
      if (restarted) first = true;
      setVersion(e.version);
      setNeedsDecision(e.needsDecision);
      if (!first || e.version === 0) return;
      first = false;
      if (e.needsDecision > 0) setDecisionsOpen(true);
    });
  }, []);
  useEffect(() => {
    if (!project && projects.data?.[0]) setProject(projects.data[0].name);
  }, [project, projects.data]);

  return (
    <div className="app">
      <header>
        <h1>Take Studio</h1>
        <nav>
          {(['storyboard', 'tasks', 'library', 'spend', 'settings'] as Tab[]).map((t) => (
            <button key={t} className={tab === t ? 'active' : ''} onClick={() => setTab(t)} data-tab={t}>
              {t[0]!.toUpperCase() + t.slice(1)}
            </button>
          ))}
        </nav>
        <button className={`badge ${needsDecision ? 'alert' : ''}`} onClick={() => setDecisionsOpen(true)} data-testid="decisions-badge">
          Needs your decision <span>{needsDecision}</span>
        </button>
      </header>
      <HostLinkBanner />
      {paused && (
        <div className="paused" role="alert" data-testid="engine-paused">
          The studio has paused its work: {paused.reason}. Nothing paid for is lost; it carries on by itself when this is fixed.
        </div>
      )}
      <div className="body">
        <Projects projects={projects.data ?? []} error={projects.error} selected={project} onSelect={setProject} onCreated={(name) => (setProject(name), projects.reload())} />
        <main>
          <ViewBoundary key={`${tab}:${project}`}>
            {tab === 'settings' ? (
              <SettingsView />
            ) : tab === 'library' ? (
              <Library version={version} />
            ) : !project ? (
              <p className="empty">Create a project to start.</p>
            ) : tab === 'storyboard' ? (
              <StoryboardView key={project} project={project} version={version} />
            ) : tab === 'tasks' ? (
              <TaskBoard key={project} project={project} version={version} />
            ) : (
              <SpendView key={project} project={project} version={version} />
            )}
          </ViewBoundary>
        </main>
      </div>
      {decisionsOpen && <Decisions version={version} onClose={() => setDecisionsOpen(false)} />}
    </div>
  );
}
