import { useState } from 'react';
import type { LibraryItem } from '../../../main/api/contract.ts';
import { studio } from '../api.ts';
import { Dialog } from '../Dialog.tsx';
import { useAction, useLoad } from '../useLoad.ts';
import { afterOwnSave } from './Storyboard.tsx';
import { KIND_NOUN } from './TaskDetail.tsx';

interface Board {
  revision?: number;
  scenes: { id: string; image?: unknown; clip?: unknown; [other: string]: unknown }[];
  [other: string]: unknown;
}

/**
 * "Use in scene": a library image becomes a scene's still (`"image": {"task": N}`), a clip the scene's whole shot
 * (`"clip": {"task": N}`). The storyboard is saved with the revision it was read at, so a save made elsewhere
 * meanwhile is not overwritten: the person is told to try again.
 */
export function UseInScene({ item, onClose, onUsed }: { item: LibraryItem; onClose: () => void; onUsed: (words: string) => void }) {
  const noun = KIND_NOUN[item.kind];
  const [project, setProject] = useState(item.project);
  const [scene, setScene] = useState(item.scene ?? '');
  const projects = useLoad(() => studio.listProjects(), []);
  const board = useLoad(async () => (await studio.getStoryboard(project)) as Board | null, [project]);
  const save = useAction();
  const scenes = board.data?.scenes ?? [];
  const chosen = scenes.some((s) => s.id === scene) ? scene : (scenes[0]?.id ?? '');
  const use = () =>
    save.run(async () => {
      const b = board.data!;
      const field = item.kind === 'image' ? 'image' : 'clip';
      const next: Board = {
        ...b,
        scenes: b.scenes.map((s) => {
          if (s.id !== chosen) return s;
          const { image: _image, clip: _clip, ...rest } = s;
          // A clip is the whole shot, so the scene's own still goes; a still keeps nothing of an own clip.
          return { ...rest, [field]: { task: item.id } };
        }),
      };
      try {
        await studio.saveStoryboard(project, next);
      } catch (err) {
        board.reload();
        throw new Error(`${(err as Error).message}. Nothing was changed; choose again and use it.`);
      }
      // The storyboard editor of this window takes this save as its own, keeping what was typed there and not saved.
      await afterOwnSave(project).catch(() => null);
      onUsed(`The ${noun} of task ${item.id} is now scene ${chosen}'s ${field} in ${project}; nothing is bought for it.`);
    });
  return (
    <Dialog title={`Use the ${noun} of task ${item.id} in a scene`} onClose={onClose} className="use-in-scene" testId="use-in-scene">
      <p className="note">
        {item.kind === 'image'
          ? 'The scene’s clip is made from this picture; no image is bought for it.'
          : 'The scene plays this clip; no image or clip is bought for it. Its narration is still made if written.'}
      </p>
      <div className="row">
        <label>
          Project
          <select aria-label="Project to use it in" value={project} onChange={(e) => setProject(e.target.value)}>
            {(projects.data?.map((p) => p.name) ?? [item.project]).map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </label>
        <label>
          Scene
          <select aria-label="Scene to use it in" value={chosen} onChange={(e) => setScene(e.target.value)} disabled={scenes.length === 0}>
            {scenes.map((s) => (
              <option key={s.id}>{s.id}</option>
            ))}
          </select>
        </label>
      </div>
      {board.data === null && <p className="note">{project} has no storyboard yet.</p>}
      {(save.error ?? board.error) && (
        <p className="error" role="alert">
          {save.error ?? board.error}
        </p>
      )}
      <div className="row">
        <button className="primary" disabled={!chosen || save.busy || !board.data} onClick={() => void use()}>
          Use in scene {chosen}
        </button>
        <button onClick={onClose}>Cancel</button>
      </div>
    </Dialog>
  );
}
