import { useRef } from 'react';
import { studio } from '../api.ts';
import { useAction } from '../useLoad.ts';

interface VideoDraft {
  width: number;
  height: number;
  fps: number;
  fit?: unknown;
}

/** The aspect presets of a storyboard's `"aspect"`, as width:height. */
const ASPECTS: [string, number, number][] = [['16:9', 16, 9], ['9:16', 9, 16], ['1:1', 1, 1], ['4:5', 4, 5], ['21:9', 21, 9]];
const FITS: [string, string][] = [['crop', 'Crop to fill'], ['pad', 'Fit whole, black bars'], ['blur', 'Fit whole, blurred background']];
const even = (n: number) => Math.max(2, Math.round(n / 2) * 2);

/** The preset a size is in, if any. */
const aspectOf = (w: number, h: number) => ASPECTS.find(([, a, b]) => Math.abs(w / h - a / b) < 0.01)?.[0] ?? 'custom';

/**
 * The finished video's shape, size and frame rate, as the storyboard keeps them (even sizes: H.264 needs them),
 * and how a picture of another shape fills its frame. A preset keeps the short side and sets the long one.
 */
export function VideoSettings({ value, onChange }: { value: VideoDraft; onChange: (change: Partial<VideoDraft>) => void }) {
  const field = (name: 'width' | 'height' | 'fps', label: string, min: number, max: number, step: number) => (
    <label>
      {label}
      <input type="number" min={min} max={max} step={step} value={value[name]} onChange={(e) => onChange({ [name]: Number(e.target.value) })} />
    </label>
  );
  const preset = (name: string) => {
    const found = ASPECTS.find(([n]) => n === name);
    if (!found) return;
    const [, a, b] = found;
    const short = even(Math.min(value.width, value.height));
    const long = even((short * Math.max(a, b)) / Math.min(a, b));
    onChange(a >= b ? { width: long, height: short } : { width: short, height: long });
  };
  return (
    <div className="video-settings row" role="group" aria-label="Video size and frame rate">
      <label>
        Shape
        <select value={aspectOf(value.width, value.height)} onChange={(e) => preset(e.target.value)}>
          {ASPECTS.map(([name]) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
          <option value="custom" disabled>
            custom
          </option>
        </select>
      </label>
      {field('width', 'Width', 64, 3840, 2)}
      {field('height', 'Height', 64, 3840, 2)}
      {field('fps', 'Frames per second', 1, 60, 1)}
      <label>
        Fill the frame
        <select value={typeof value.fit === 'string' ? value.fit : 'crop'} onChange={(e) => onChange({ fit: e.target.value })}>
          {FITS.map(([fit, words]) => (
            <option key={fit} value={fit}>
              {words}
            </option>
          ))}
        </select>
      </label>
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
      // An import replaces whatever is saved, knowingly: it is made from the revision saved now.
      const current = (await studio.getStoryboard(project)) as { revision?: number } | null;
      const board = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? { ...parsed, revision: current?.revision ?? 0 } : parsed;
      await studio.saveStoryboard(project, board);
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
