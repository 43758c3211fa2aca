/** The film's exports of the StudioApi (contract.ts): the presets offered and the exports made; types only, as the renderer reads them. */

import type { Preset } from '../domain/presets.ts';
import type { Status, TaskView } from './taskTypes.ts';

export type { Preset };

/** One preset as the "Export as…" menu offers it, for this project's film. */
export interface PresetChoice {
  preset: Preset;
  /** What it makes: "Vertical 1080 × 1920 (MP4)", "GIF preview (first 6 s, 480 × 270)". */
  label: string;
  /** Where it is for: "for Reels, Shorts and TikTok". */
  use: string;
}

/** An export of the film, made or being made. */
export interface FilmExportView {
  preset: Preset;
  label: string;
  /** The file's name, the project's and the preset's: "Fox film - vertical.mp4". */
  fileName: string;
  /** Its render task: progress and time left while it runs, the file's address once it is made. */
  task: TaskView;
}

export interface FilmRendersView {
  /** The six presets, labelled for this project's frame; none while it has no storyboard that passes the checks. */
  presets: PresetChoice[];
  /** The exports, newest first; a cancelled one is left out. */
  exports: FilmExportView[];
  /** Every render of the project, the film's and the exports', newest first: what a page watches to say one is ready. */
  renders: { id: number; status: Status; preset: Preset | null }[];
}
