import { useEffect, useRef, useState } from 'react';
import { studio } from '../api.ts';
import { useAction, useLoad } from '../useLoad.ts';
import { EstimatePanel } from './Estimate.tsx';
import { FinalVideo } from './FinalVideo.tsx';
import { StepChoices, useModels, type StepsDraft } from './ModelPicker.tsx';
import { ScenePreview, useScenePlan } from './ScenePreview.tsx';
import { StoryboardConflict, type Conflict } from './StoryboardConflict.tsx';
import { StoryboardFile, VideoSettings } from './StoryboardFile.tsx';
import { Takes } from './Takes.tsx';

interface SceneDraft {
  id: string;
  imagePrompt: string;
  motionPrompt: string;
  narration: string | null;
  duration: number;
  steps?: StepsDraft;
  [other: string]: unknown;
}

interface BoardDraft {
  width: number;
  height: number;
  fps: number;
  steps?: StepsDraft;
  scenes: SceneDraft[];
  /** The saved revision this draft was made from, sent back with its save; none for a new storyboard. */
  revision?: number;
  [other: string]: unknown;
}

const blankScene = (n: number): SceneDraft => ({ id: `scene-${n}`, imagePrompt: '', motionPrompt: '', narration: '', duration: 3 });
const blankBoard = (): BoardDraft => ({ width: 1280, height: 720, fps: 24, scenes: [blankScene(1)] });

/** Unsaved edits per project while the window is open: switching views or projects loses nothing typed. */
const unsaved = new Map<string, BoardDraft>();
/** The saved storyboard each project's draft started from: the base of a merge with a version saved elsewhere. */
const loadedFrom = new Map<string, BoardDraft | null>();

export function StoryboardView({ project, version }: { project: string; version: number }) {
  // Read again on every change, so a save in another tab or on another machine shows here within a second; the
  // same revision keeps the same object, so nothing that depends on it loads again.
  const last = useRef<BoardDraft | null | undefined>(undefined);
  const saved = useLoad(
    async () => {
      const board = (await studio.getStoryboard(project)) as BoardDraft | null;
      if (last.current !== undefined && (last.current?.revision ?? 0) === (board?.revision ?? 0)) return last.current;
      return (last.current = board);
    },
    [version],
    project,
  );
  const [conflict, setConflict] = useState<Conflict<BoardDraft> | null>(null);
  const [draft, setDraft] = useState<BoardDraft | null>(() => unsaved.get(project) ?? null);
  const [dirty, setDirty] = useState(() => unsaved.has(project));
  const save = useAction();
  const models = useModels(version);
  const plan = useScenePlan(project, version, saved.data);

  useEffect(() => {
    // Nothing loaded yet (or the load failed): no draft, so nothing can be saved over what is stored.
    // What was typed and not saved stays as it is; a newer save elsewhere waits for the person's choice at Save.
    if (saved.data === undefined || unsaved.has(project)) return;
    loadedFrom.set(project, saved.data);
    setDraft(saved.data ?? blankBoard());
    setDirty(!saved.data);
  }, [saved.data]);

  const edit = (change: (d: BoardDraft) => void, from: BoardDraft | null = draft) => {
    const next = structuredClone(from!);
    change(next);
    unsaved.set(project, next);
    setDraft(next);
    setDirty(true);
  };
  const send = (sent: BoardDraft) =>
    save.run(async () => {
      let revision: number;
      try {
        revision = await studio.saveStoryboard(project, { ...sent, scenes: sent.scenes.map((s) => ({ ...s, narration: s.narration || null })) });
      } catch (e) {
        // Refused as made from an older revision (409 over loopback, the same words over the desktop bridge):
        // told by the revision saved now, and both versions are put before the person.
        const theirs = (await studio.getStoryboard(project).catch(() => null)) as BoardDraft | null;
        if (!theirs || (theirs.revision ?? 0) === (sent.revision ?? 0)) throw e;
        setConflict({ mine: unsaved.get(project) ?? sent, theirs, base: loadedFrom.get(project) ?? null });
        return;
      }
      setConflict(null);
      loadedFrom.set(project, { ...sent, revision });
      // Anything typed while the save was on its way was not in it: it stays, unsaved, on screen, now made from
      // the revision just saved.
      const now = unsaved.get(project) ?? sent;
      if (now === sent) {
        unsaved.delete(project);
        setDirty(false);
        setDraft({ ...sent, revision });
      } else {
        const next = { ...now, revision };
        unsaved.set(project, next);
        setDraft(next);
      }
      saved.reload();
    });
  // A failed first load is shown in place of the editor; once there is a draft (loaded, or started anew in
  // place of a storyboard that could not be loaded), only a later reload's failure is worth showing.
  const reloadError = saved.data === undefined ? null : saved.error;

  if (!draft) {
    if (!saved.error) return <p className="empty">Loading…</p>;
    return (
      <section className="storyboard-error">
        <p className="error" role="alert" data-testid="storyboard-error">
          {saved.error}
        </p>
        <div className="row">
          <button onClick={saved.reload}>Try again</button>
          <button
            onClick={() =>
              // Replaces the one that cannot be loaded, knowingly: made from the revision saved now.
              void save.run(async () => edit(() => undefined, { ...blankBoard(), revision: await studio.storyboardRevision(project) }))
            }
          >
            Start a new storyboard for {project}
          </button>
        </div>
        {save.error && <p className="error">{save.error}</p>}
      </section>
    );
  }
  return (
    <div className="storyboard">
      <section className="scenes">
        <h2>Storyboard</h2>
        <StoryboardFile
          project={project}
          onImported={() => {
            unsaved.delete(project);
            setDirty(false);
            saved.reload();
          }}
        />
        <section className="project-steps" aria-label="Video and models for the whole project">
          <VideoSettings value={draft} onChange={(change) => edit((d) => Object.assign(d, change))} />
          {models.data && <StepChoices catalogue={models.data} value={draft.steps} scope="project" onChange={(steps) => edit((d) => (d.steps = steps))} />}
          {models.error && <p className="error">{models.error}</p>}
        </section>
        {draft.scenes.map((scene, i) => (
          <div className="scene" key={i} data-testid={`scene-${i}`}>
            <div className="scene-head">
              <input aria-label="Scene name" value={scene.id} onChange={(e) => edit((d) => (d.scenes[i]!.id = e.target.value))} />
              <label>
                seconds
                <input type="number" min={0.5} max={60} step={0.5} value={scene.duration} onChange={(e) => edit((d) => (d.scenes[i]!.duration = Number(e.target.value)))} />
              </label>
              <button disabled={i === 0} onClick={() => edit((d) => d.scenes.splice(i - 1, 0, d.scenes.splice(i, 1)[0]!))} title="Move up">↑</button>
              <button disabled={draft.scenes.length === 1} onClick={() => edit((d) => d.scenes.splice(i, 1))} title="Remove scene">✕</button>
            </div>
            <textarea aria-label="Image prompt" placeholder="What the scene shows" value={scene.imagePrompt} onChange={(e) => edit((d) => (d.scenes[i]!.imagePrompt = e.target.value))} />
            <input aria-label="Motion prompt" placeholder="How the camera moves" value={scene.motionPrompt} onChange={(e) => edit((d) => (d.scenes[i]!.motionPrompt = e.target.value))} />
            <textarea aria-label="Narration" placeholder="Narration (optional)" value={scene.narration ?? ''} onChange={(e) => edit((d) => (d.scenes[i]!.narration = e.target.value))} />
            {models.data && (
              <details className="scene-steps">
                <summary>Models for this scene{scene.steps && Object.keys(scene.steps).length ? ` (${Object.keys(scene.steps).join(', ')} chosen here)` : ''}</summary>
                <StepChoices catalogue={models.data} value={scene.steps} parent={draft.steps} scope={scene.id} onChange={(steps) => edit((d) => (d.scenes[i]!.steps = steps))} />
              </details>
            )}
            <ScenePreview scene={scene.id} steps={plan.data?.scenes.find((s) => s.id === scene.id)?.steps} />
            <Takes project={project} scene={scene.id} version={version} />
          </div>
        ))}
        <div className="row">
          <button onClick={() => edit((d) => d.scenes.push(blankScene(d.scenes.length + 1)))}>Add scene</button>
          <button
            className="primary"
            disabled={!dirty || save.busy}
            onClick={() => void send(draft)}
          >
            Save storyboard
          </button>
        </div>
        {dirty && saved.data && (saved.data.revision ?? 0) !== (draft.revision ?? 0) && !conflict && (
          <p className="note" data-testid="saved-elsewhere">
            Saved elsewhere since you started editing (revision {saved.data.revision}); your save will show both versions.
          </p>
        )}
        {conflict && (
          <StoryboardConflict
            conflict={conflict}
            busy={save.busy}
            onKeepMine={(mine) => {
              unsaved.set(project, mine);
              setDraft(mine);
              void send(mine);
            }}
            onTakeTheirs={(theirs) => {
              unsaved.delete(project);
              loadedFrom.set(project, theirs);
              setDraft(theirs);
              setDirty(false);
              setConflict(null);
            }}
            onMerge={(merged) => {
              unsaved.set(project, merged);
              loadedFrom.set(project, conflict.theirs);
              setDraft(merged);
              setDirty(true);
              setConflict(null);
            }}
          />
        )}
        {(save.error ?? reloadError) && (
          <p className="error" role="alert">
            {save.error ?? reloadError}
          </p>
        )}
      </section>
      <FinalVideo project={project} render={plan.data?.render ?? null} ready={plan.data?.videoReady ?? null} />
      <EstimatePanel project={project} version={version} stale={dirty} savedAt={saved.data} />
    </div>
  );
}
