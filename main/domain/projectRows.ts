/**
 * A project's rows as the embedded database keeps them, column by column, for copying into a team database whose
 * tables have the same columns. Ids are the embedded database's; the copy numbers them anew.
 */
export type Row = Record<string, unknown>;

export interface ProjectRows {
  project: { id: number; name: string; budget: number | null; currency: string; created_at: number };
  storyboard: { json: string; updated_at: number } | null;
  /** Every column of each task, in id order. */
  tasks: (Row & { id: number; status: string; kind: string; provider: string; model: string; input_json: string; output_path: string | null })[];
  dependencies: { task_id: number; depends_on: number }[];
  /** In the order they were written. */
  events: (Row & { id: number; task_id: number })[];
  outputs: { task_id: number; idx: number; path: string; sha256: string; bytes: number | null; content_type: string | null; machine: string | null }[];
  takes: (Row & { image_task_id: number; clip_task_id: number; speech_task_id: number | null })[];
  picks: Row[];
}

/** A project's rows as the team database takes them, ids numbered there (see teamRows). */
export interface TeamRows {
  storyboard: { json: string; updated_at: number } | null;
  /** With their ids in the team database. */
  tasks: Row[];
  dependencies: Row[];
  /** In the order they happened; numbered there in that order. */
  events: Row[];
  outputs: Row[];
  takes: Row[];
  picks: Row[];
}
