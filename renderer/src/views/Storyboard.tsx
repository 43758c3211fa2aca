import { useEffect, useRef, useState, type CSSProperties } from 'react';
import { studio } from '../api.ts';
import { useAction, useLoad } from '../useLoad.ts';
import { EstimatePanel } from './Estimate.tsx';
import { FinalVideo } from './FinalVideo.tsx';
import { Finishing, SceneCut } from './Finishing.tsx';
import { burnsSubtitles, type FinishingDraft } from './finishingDraft.ts';
import { StepChoices, useModels, type StepsDraft } from './ModelPicker.tsx';
import { OwnPicture, usePictureSend, type OwnMediaDraft } from './OwnPicture.tsx';
import { ScenePreview, useScenePlan } from './ScenePreview.tsx';
import { StoryboardConflict, type Conflict } from './StoryboardConflict.tsx';
import { StoryboardFile, VideoSettings } from './StoryboardFile.tsx';
import { DraftFromIdea } from './DraftFromIdea.tsx';
import { carryOnto } from './storyboardMerge.ts';
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

/** A seed typed in the editor is the one the scene's next Generate sends exactly: its take count starts again from it. */
function setSeed(scene: SceneDraft, typed: string): void {
  delete scene.imageSeed;
  delete scene.clipSeed;
  delete scene.take;
  if (typed.trim() === '') delete scene.seed;
  else scene.seed = Number(typed);
}

const blankScene = (n: number): SceneDraft => ({ id: `scene-${n}`, imagePrompt: '', motionPrompt: '', narration: '', duration: 3 });
const blankBoard = (): BoardDraft => ({ width: 1280, height: 720, fps: 24, scenes: [blankScene(1)] });

/** Unsaved edits per project while the window is open: switching views or projects loses nothing typed. */
const unsaved = new Map<string, BoardDraft>();
/** The saved storyboard each project's draft started from: the base of a merge with a version saved elsewhere. */
const loadedFrom = new Map<string, BoardDraft | null>();

/**
 * After this tab's own action saved the storyboard (a pick, a new take, a Generate, a draft from an idea, a library
 * picture used in a scene): the editor's draft is carried onto that save at once, keeping what was typed and not
 * saved, so the next save is not told of a save made elsewhere. Only the one revision after the draft's is the
 * action's own; anything further was saved elsewhere too, and stays for the person to choose at Save.
 * Gives the draft to show, or null when there is nothing new.
 */
export async function afterOwnSave(project: string, scenesReplaced = false): Promise<{ draft: BoardDraft; dirty: boolean } | null> {
  const saved = (await studio.getStoryboard(project)) as BoardDraft | null;
  const mine = unsaved.get(project);
  if (!saved || (saved.revision ?? 0) !== ((mine ?? loadedFrom.get(project))?.revision ?? 0) + 1) return null;
  // A new storyboard's draft started from the blank one.
  const base = loadedFrom.get(project) ?? blankBoard();
  loadedFrom.set(project, saved);
  if (!mine) return { draft: saved, dirty: false };
  const next = carryOnto(base, mine, saved, scenesReplaced);
  if (JSON.stringify(next) === JSON.stringify(saved)) {
    unsaved.delete(project);
    return { draft: saved, dirty: false };
  }
  unsaved.set(project, next);
  return { draft: next, dirty: true };
}

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
    return next;
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
  // This tab's own action saved the storyboard: shown here at once, with what was typed and not saved kept on it.
  const adopt = (scenesReplaced = false) =>
    void afterOwnSave(project, scenesReplaced)
      .then((got) => {
        if (!got) return;
        setDraft(got.draft);
        setDirty(got.dirty);
      })
      // A failed read changes nothing: the reload below, and the next change, show the save.
      .catch(() => undefined)
      .finally(saved.reload);
  const finish = (change: (d: FinishingDraft) => void) => edit((d) => change(d as FinishingDraft));
  const pictures = usePictureSend(project);
  // A picture sent for a scene becomes its image, and the storyboard is saved with it at once (with its revision).
  const takePicture = async (i: number, file: File) => {
    const sent = await pictures.send(draft!.scenes[i]!.id, file);
    if (!sent) return;
    // A scene has its own still or its own clip, not both.
    const next = edit((d) => {
      if (sent.clip) {
        d.scenes[i]!.clip = sent.clip;
        delete d.scenes[i]!.image;
      } else {
        d.scenes[i]!.image = sent.image;
        delete d.scenes[i]!.clip;
      }
    }, unsaved.get(project) ?? draft);
    void send(next);
  };

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
      {/* The film first, above the fold, once there is one; its render's progress while it is made. */}
      <FinalVideo project={project} version={version} render={plan.data?.render ?? null} ready={plan.data?.videoReady ?? null} burned={!!saved.data && burnsSubtitles(saved.data as FinishingDraft)} />
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
        <DraftFromIdea
          project={project}
          revision={saved.data?.revision ?? 0}
          scenes={saved.data?.scenes.length ?? 0}
          onDrafted={() => adopt(true)}
        />
        <section className="project-steps" aria-label="Video and models for the whole project">
          <VideoSettings value={draft} onChange={(change) => edit((d) => Object.assign(d, change))} />
          {models.data && <StepChoices catalogue={models.data} value={draft.steps} scope="project" onChange={(steps) => edit((d) => (d.steps = steps))} />}
          {models.error && <p className="error">{models.error}</p>}
        </section>
        {draft.scenes.map((scene, i) => (
          <div
            className="scene"
            key={i}
            data-testid={`scene-${i}`}
            // The video's shape, for the empty image and clip boxes before anything is made (studio.css).
            style={{ '--shape': `${draft.width} / ${draft.height}` } as CSSProperties}
            onDragOver={(e) => e.dataTransfer.types.includes('Files') && e.preventDefault()}
            onDrop={(e) => {
              const file = e.dataTransfer.files[0];
              if (!file) return;
              e.preventDefault();
              void takePicture(i, file);
            }}
          >
            <div className="scene-head">
              <input aria-label="Scene name" value={scene.id} onChange={(e) => edit((d) => (d.scenes[i]!.id = e.target.value))} />
              <label>
                seconds
                <input type="number" min={0.5} max={60} step={0.5} value={scene.duration} onChange={(e) => edit((d) => (d.scenes[i]!.duration = Number(e.target.value)))} />
              </label>
              <label title="The seed its image and clip are made with; the same seed and prompts again buy nothing. Empty: the scene's own">
                seed
                <input className="scene-seed" aria-label={`Seed of ${scene.id}`} type="number" min={0} step={1} placeholder="auto" value={typeof scene.seed === 'number' ? scene.seed : ''} onChange={(e) => edit((d) => setSeed(d.scenes[i]!, e.target.value))} />
              </label>
              <SceneCut board={draft as FinishingDraft} index={i} id={scene.id} onChange={finish} />
              <button className="scene-move" disabled={i === 0} onClick={() => edit((d) => d.scenes.splice(i - 1, 0, d.scenes.splice(i, 1)[0]!))} title="Move up">↑</button>
              <button disabled={draft.scenes.length === 1} onClick={() => edit((d) => d.scenes.splice(i, 1))} title="Remove scene">✕</button>
            </div>
            <label className="field">
              Image prompt
              <textarea aria-label="Image prompt" placeholder="What the scene shows" value={scene.imagePrompt} onChange={(e) => edit((d) => (d.scenes[i]!.imagePrompt = e.target.value))} />
            </label>
            <label className="field">
              Motion
              <input aria-label="Motion prompt" placeholder="How the camera moves" value={scene.motionPrompt} onChange={(e) => edit((d) => (d.scenes[i]!.motionPrompt = e.target.value))} />
            </label>
            <label className="field">
              Narration
              <textarea aria-label="Narration" placeholder="Optional: what the voice says over the scene" value={scene.narration ?? ''} onChange={(e) => edit((d) => (d.scenes[i]!.narration = e.target.value))} />
            </label>
            {models.data && (
              <details className="scene-steps">
                <summary>Models for this scene{scene.steps && Object.keys(scene.steps).length ? ` (${Object.keys(scene.steps).join(', ')} chosen here)` : ''}</summary>
                <StepChoices catalogue={models.data} value={scene.steps} parent={draft.steps} scope={scene.id} onChange={(steps) => edit((d) => (d.scenes[i]!.steps = steps))} />
              </details>
            )}
            <OwnPicture
              project={project}
              scene={scene.id}
              image={scene.image as OwnMediaDraft | undefined}
              clip={scene.clip as OwnMediaDraft | undefined}
              busy={pictures.busy === scene.id}
              error={pictures.error(scene.id)}
              onPick={(file) => void takePicture(i, file)}
              onRemove={() =>
                edit((d) => {
                  delete d.scenes[i]!.image;
                  delete d.scenes[i]!.clip;
                })
              }
            />
            <ScenePreview scene={scene.id} steps={plan.data?.scenes.find((s) => s.id === scene.id)?.steps} own={{ project, image: scene.image as OwnMediaDraft | undefined, clip: scene.clip as OwnMediaDraft | undefined }} />
            <Takes project={project} scene={scene.id} version={version} onSaved={adopt} />
          </div>
        ))}
        <div className="row">
          <button onClick={() => edit((d) => d.scenes.push(blankScene(d.scenes.length + 1)))}>Add scene</button>
        </div>
        <Finishing project={project} board={draft as FinishingDraft} onChange={finish} />
        <div className="row">
          <button
            className="primary"
            disabled={!dirty || save.busy}
            onClick={() => void send(draft)}
          >
            Save storyboard
          </button>
        </div>
        {dirty && saved.data && (saved.data.revision ?? 0) > (draft.revision ?? 0) && !conflict && (
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
      <EstimatePanel project={project} version={version} stale={dirty} savedAt={saved.data} onSaved={adopt} />
    </div>
  );
}
