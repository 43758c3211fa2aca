/** The library and task detail views of the StudioApi (contract.ts); types only, as the renderer reads them. */

import type { Kind, TaskEventView, TaskRefView, TaskView } from './taskTypes.ts';

/** One file of a saved result. */
export interface OutputFileView {
  index: number;
  /** Where the UI loads it (a studio-media: or /media/ URL); null once the person deleted it. */
  url: string | null;
  contentType: string | null;
  bytes: number | null;
  /** The machine that saved it, or null for files saved before machines were recorded. */
  machine: string | null;
  /**
   * Why this machine cannot show it, or null when it can: which machine saved it and where, when it is not in this
   * machine's media folder, or that it is not the file that was saved. In the library only its size is compared;
   * a task's detail compares its checksum.
   */
  problem: string | null;
}

export interface LibraryQuery {
  project?: string | null;
  kind?: Kind | null;
  provider?: string | null;
  /** ISO 8601 instants: results finished from `from`, before `to`. */
  from?: string | null;
  to?: string | null;
  /** Words of the prompt or narration, matched without case. */
  search?: string | null;
  offset: number;
  limit: number;
}

export interface LibraryItem extends TaskView {
  project: string;
  /** The scene that used it (from the renders that did), or null. */
  scene: string | null;
  /** What was sent, as the provider received it. */
  input: unknown;
  files: OutputFileView[];
  /** When the person deleted its files, or null while they are kept. */
  deletedAt: string | null;
}

export interface LibraryPage {
  total: number;
  offset: number;
  items: LibraryItem[];
  /** Every project and provider with a saved result, for the filters. */
  projects: string[];
  providers: string[];
}

export interface TaskDetail extends LibraryItem {
  events: TaskEventView[];
  /** The tasks it was made from, and the ones made from it. */
  dependsOn: TaskRefView[];
  dependents: TaskRefView[];
}
