import { useRef } from 'react';
import { studio } from '../api.ts';
import { useAction } from '../useLoad.ts';

interface VideoDraft {
  width: number;
  height: number;
  fps: number;
}

/** The finished video's size and frame rate, as the storyboard keeps them (even sizes: H.264 needs them). */
export function VideoSettings({ value, onChange }: { value: VideoDraft; onChange: (field: keyof VideoDraft, v: number) => void }) {
  const field = (name: keyof VideoDraft, label: string, min: number, max: number, step: number) => (
    <label>
      {label}
      <input type="number" min={min} max={max} step={step} value={value[name]} onChange={(e) => onChange(name, Number(e.target.value))} />
    </label>
  );
  return (
    <div className="video-settings row" role="group" aria-label="Video size and frame rate">
      {field('width', 'Width', 64, 3840, 2)}
      {field('height', 'Height', 64, 2160, 2)}
      {field('fps', 'Frames per second', 1, 60, 1)}
    </div>
  );
}

/**
 * Import: a storyboard file, checked by the studio as any save is (its errors shown as they are), replacing
 * the project's storyboard. Export: the stored storyboard as a JSON file.
 */
export function StoryboardFile({ project, onImported }: { project: string; onImported: () => void }) {
  const input = useRef<HTMLInputElement>(null);
  const action = useAction();
  const exportFile = () =>
    action.run(async () => {
      const board = await studio.getStoryboard(project);
      if (!board) throw new Error('there is no saved storyboard to export yet; save it first');
      const url = URL.createObjectURL(new Blob([JSON.stringify(board, null, 2) + '\n'], { type: 'application/json' }));
      const a = document.createElement('a');
      a.href = url;
      a.download = `${project.replace(/[\\/:*?"<>|]+/g, ' ').trim() || 'storyboard'}.storyboard.json`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    });
  const importFile = (file: File) =>
    action.run(async () => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(await file.text());
      } catch (e) {
        throw new Error(`${file.name} is not JSON: ${(e as Error).message}`);
      }
      await studio.saveStoryboard(project, parsed);
      onImported();
    });
  return (
    <div className="row storyboard-file">
      <button onClick={() => input.current?.click()} disabled={action.busy}>
        Import storyboard…
      </button>
      <input
        ref={input}
        type="file"
        accept="application/json,.json"
        aria-label="Storyboard file to import"
        hidden
        onChange={(e) => {
          const file = e.target.files?.[0];
          e.target.value = '';
          if (file) void importFile(file);
        }}
      />
      <button onClick={() => void exportFile()} disabled={action.busy}>
        Export storyboard
      </button>
      {action.error && (
        <p className="error" role="alert" data-testid="storyboard-file-error">
          {action.error}
        </p>
      )}
    </div>
  );
}
