import { basename, join } from 'node:path';
import { inside } from '../media/mediaFolder.ts';
import { inputHash } from '../domain/tasks/inputHash.ts';
import type { ProjectRows, TeamRows } from '../domain/projectRows.ts';

/**
 * What `studio team push` decides, apart from any database or file: whether a project can move now, where each of
 * its files goes in the team's media folder, and its rows as the team database takes them, ids numbered anew.
 */

/** Steps that would run on both sides, and be paid twice, if the project moved while they are under way. */
const IN_FLIGHT = new Set(['PENDING', 'RUNNING', 'SUBMITTED']);

const list = (tasks: { id: number; status: string }[]) => tasks.map((t) => `${t.id} ${t.status}`).join(', ');

/**
 * Why the project cannot move now, or null. A step in flight (even one only enqueued) would run here and there
 * and be paid twice. An unknown outcome must be decided by a person on one side only, and here is where its
 * request ids were journaled and its lookups run, so it is decided here before the move.
 */
export function pushRefusal(name: string, tasks: readonly { id: number; status: string }[]): string | null {
  const busy = tasks.filter((t) => IN_FLIGHT.has(t.status));
  if (busy.length > 0) {
    return (
      `project "${name}" has ${busy.length} step(s) in flight (task ${list(busy)}); moved now, they would run on both sides and be paid twice. ` +
      'Nothing was changed. Wait until they finish (studio worker --until-idle), or cancel them (studio cancel ID), then push again'
    );
  }
  const unknown = tasks.filter((t) => t.status === 'OUTCOME_UNKNOWN');
  if (unknown.length > 0) {
    return (
      `project "${name}" has ${unknown.length} step(s) whose outcome is unknown (task ${unknown.map((t) => t.id).join(', ')}); decide them here first ` +
      '(studio unknown, then studio resolve ID), where their request ids and lookups are, and let any resubmitted step finish. Nothing was changed'
    );
  }
  return null;
}

/** Every task id an input names as `{"$output": id}`. */
function refsIn(value: unknown): number[] {
  if (Array.isArray(value)) return value.flatMap(refsIn);
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (typeof o.$output === 'number') return [o.$output];
    return Object.values(o).flatMap(refsIn);
  }
  return [];
}

/** The input with each `{"$output": id}` renumbered. */
export function renumberRefs(value: unknown, ids: ReadonlyMap<number, number>): unknown {
  if (Array.isArray(value)) return value.map((v) => renumberRefs(v, ids));
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (typeof o.$output === 'number') return { ...o, $output: ids.get(o.$output) ?? o.$output };
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, renumberRefs(v, ids)]));
  }
  return value;
}

/** Why the project's rows name a task of another project (which the team database would not have), or null. */
export function outsideReferences(rows: ProjectRows): string | null {
  const own = new Set(rows.tasks.map((t) => t.id));
  const named: { task: number; other: number }[] = [
    ...rows.dependencies.map((d) => ({ task: d.task_id, other: d.depends_on })),
    ...rows.tasks.flatMap((t) => refsIn(JSON.parse(t.input_json)).map((other) => ({ task: t.id, other }))),
  ];
  const outside = named.find((n) => !own.has(n.other));
  if (!outside) return null;
  return `task ${outside.task} of project "${rows.project.name}" uses task ${outside.other}, which is in another project; the team database would not have it. Nothing was changed`;
}

/** One saved file of the project and where it goes in the team's media folder. */
export interface FilePlan {
  taskId: number;
  index: number;
  sha256: string;
  /** Where the file is on this machine. */
  source: string;
  /** Its path in the team database's row: relative to the team's media folder. */
  stored: string;
  /** Where it is copied to, or null when it is in the team's media folder already. */
  copyTo: string | null;
  /** False for a result whose files the person deleted: its row moves, no file does. */
  kept: boolean;
}

/**
 * Where each file goes. One already in the team's media folder stays where it is; any other is copied under this
 * database's own folder there (`space`), at its path in the data folder, so a move run again copies to the same place.
 */
export function planFiles(
  rows: ProjectRows,
  where: { resolveHere: (stored: string) => string; teamRoot: string; dataDir: string; space: string },
): FilePlan[] {
  const kept = new Set(rows.tasks.filter((t) => t.output_path !== null).map((t) => t.id));
  return rows.outputs.map((o) => {
    const source = where.resolveHere(o.path);
    const already = inside(where.teamRoot, source);
    const stored = already ?? `${where.space}/${inside(where.dataDir, source) ?? `elsewhere/task-${o.task_id}-${o.idx}-${basename(source)}`}`;
    return {
      taskId: o.task_id,
      index: o.idx,
      sha256: o.sha256,
      source,
      stored,
      copyTo: already !== null || !kept.has(o.task_id) ? null : join(where.teamRoot, ...stored.split('/')),
      kept: kept.has(o.task_id),
    };
  });
}

/**
 * The rows renumbered: `projectId` and `ids` (old task id to new) are the team database's. An input's references
 * to other tasks are renumbered, and its hash taken again, so a Generate there finds the step it already has.
 * Each file's row names its path in the team's media folder, and the machine that put it there: this one, for a
 * file it copied.
 */
export function teamRows(rows: ProjectRows, projectId: number, ids: ReadonlyMap<number, number>, files: readonly FilePlan[], machine: string): TeamRows {
  const id = (old: number | null) => (old === null ? null : ids.get(old)!);
  const file = new Map(files.map((f) => [`${f.taskId}:${f.index}`, f]));
  return {
    storyboard: rows.storyboard,
    tasks: rows.tasks.map((t) => {
      const input = renumberRefs(JSON.parse(t.input_json), ids);
      const main = file.get(`${t.id}:0`);
      return {
        ...t,
        id: id(t.id),
        project_id: projectId,
        input_json: JSON.stringify(input),
        input_hash: inputHash(t.provider, t.model, input),
        output_path: t.output_path === null ? null : (main?.stored ?? t.output_path),
      };
    }),
    dependencies: rows.dependencies.map((d) => ({ task_id: id(d.task_id), depends_on: id(d.depends_on) })),
    events: rows.events.map((e) => ({ ...e, task_id: id(e.task_id) })),
    outputs: rows.outputs.map((o) => {
      const f = file.get(`${o.task_id}:${o.idx}`)!;
      return { ...o, task_id: id(o.task_id), path: f.stored, machine: f.copyTo === null ? (o.machine ?? machine) : machine };
    }),
    takes: rows.takes.map((t) => ({
      ...t,
      project_id: projectId,
      image_task_id: id(t.image_task_id),
      clip_task_id: id(t.clip_task_id),
      speech_task_id: id(t.speech_task_id),
    })),
    picks: rows.picks.map((p) => ({ ...p, project_id: projectId })),
  };
}
