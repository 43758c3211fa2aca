/** The StudioApi's library: every saved result with its files, a task's whole detail, and deleting a result's files. */

import { rmSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { costBasis } from '../domain/costBasis.ts';
import { isKind, type Task } from '../domain/tasks/model.ts';
import { moneyWords } from '../domain/money.ts';
import { ApiError } from './apiErrors.ts';
import { named, type ServiceContext } from './serviceContext.ts';
import { eventView, iso, ref, taskView } from './taskView.ts';
import type { LibraryItem, LibraryPage, LibraryQuery, OutputFileView, TaskDetail } from './contract.ts';

/** `deep`: each kept file's checksum is compared, not only its size. */
async function files(ctx: ServiceContext, t: Task, deep: boolean): Promise<OutputFileView[]> {
  const kept = t.status === 'SUCCEEDED' && t.outputPath !== null;
  const outputs = await ctx.studio.tasks.outputs(t.id);
  const views: OutputFileView[] = [];
  for (const o of outputs) {
    const found = kept ? await ctx.studio.files.check(o, outputs.length > 1 ? `file ${o.index + 1} of task ${t.id}` : `task ${t.id}'s result`, deep) : null;
    views.push({
      index: o.index,
      url: kept ? `${ctx.deps.mediaUrl(t.id)}/${o.index}` : null,
      contentType: o.contentType,
      bytes: o.bytes,
      machine: o.machine,
      problem: found && found.state !== 'here' ? found.words : null,
    });
  }
  return views;
}

async function deletedAt(ctx: ServiceContext, t: Task): Promise<string | null> {
  if (t.status !== 'SUCCEEDED' || t.outputPath !== null) return null;
  const deleted = (await ctx.studio.tasks.events(t.id)).filter((e) => (e.detail as { deletedFiles?: unknown } | null)?.deletedFiles !== undefined).at(-1);
  return deleted ? iso(deleted.at) : null;
}

async function libraryItem(ctx: ServiceContext, t: Task, project: string, scene: string | null, deep = false): Promise<LibraryItem> {
  return { ...(await taskView(ctx, t)), project, scene, input: t.input, files: await files(ctx, t, deep), deletedAt: await deletedAt(ctx, t) };
}

export async function library(ctx: ServiceContext, query: LibraryQuery): Promise<LibraryPage> {
  const q = query ?? ({} as LibraryQuery);
  const instant = (value: string | null | undefined, name: string) => {
    if (value === null || value === undefined || value === '') return null;
    const ms = Date.parse(value);
    if (!Number.isFinite(ms)) throw new ApiError(`"${name}" is not a date: ${String(value).slice(0, 40)}`);
    return ms;
  };
  if (q.kind != null && !isKind(q.kind)) throw new ApiError(`there is no kind "${q.kind}"`);
  const offset = Math.max(0, Math.floor(Number(q.offset) || 0));
  const limit = Math.min(200, Math.max(1, Math.floor(Number(q.limit) || 50)));
  const projects = await ctx.studio.projects.list();
  const projectId = q.project ? (await ctx.project(q.project)).id : null;
  const page = await ctx.studio.tasks.library(
    { projectId, kind: q.kind ?? null, provider: q.provider || null, from: instant(q.from, 'from'), to: instant(q.to, 'to'), search: q.search?.trim() || null },
    offset,
    limit,
  );
  const scenes = await ctx.studio.tasks.scenesOf(page.items.map((i) => i.task.id));
  const items: LibraryItem[] = [];
  for (const i of page.items) items.push(await libraryItem(ctx, i.task, i.project, scenes.get(i.task.id) ?? null));
  return {
    total: page.total,
    offset,
    items,
    projects: projects.map((p) => p.name),
    providers: await ctx.studio.tasks.libraryProviders(),
  };
}

/**
 * The person deletes a saved result: the row forgets its files first (so nothing serves or reuses them),
 * then they are removed. What it cost stays counted: a provider refunds nothing for a deleted file.
 */
export async function deleteOutput(ctx: ServiceContext, taskId: number): Promise<LibraryItem> {
  const { task, project } = await named(ctx, taskId);
  if (task.status !== 'SUCCEEDED' || task.outputPath === null) throw new ApiError(`task ${taskId} has no saved result to delete`);
  const paths = (await ctx.studio.tasks.outputs(taskId)).map((o) => ctx.studio.media.resolve(o.path));
  const folders = [resolve(ctx.studio.dataDir) + sep, resolve(ctx.studio.media.base) + sep];
  // The studio removes only files it saved itself: in its own data folder, or its database's in the media folder.
  const own = paths.filter((p) => folders.some((f) => resolve(p).startsWith(f)));
  const paid = task.charged === 'no' ? 'it cost nothing' : `it cost ${moneyWords(task.costActual ?? task.costEstimated ?? 0, task.currency)} (${costBasis(task)}), not refunded`;
  const forgotten = await ctx.studio.tasks.forgetOutputs(taskId, `deleted by the person in the library; ${paid}`, own, ctx.studio.clock.now());
  if (!forgotten) throw new ApiError(`task ${taskId} has no saved result to delete`);
  const left: string[] = [];
  for (const p of own) {
    try {
      rmSync(p, { force: true });
    } catch {
      left.push(p);
    }
  }
  if (left.length > 0) throw new ApiError(`the result is marked deleted, but ${left.length} file(s) could not be removed: ${left.join(', ')}`);
  return libraryItem(ctx, forgotten, project, (await ctx.studio.tasks.scenesOf([taskId])).get(taskId) ?? null);
}

export async function taskDetail(ctx: ServiceContext, taskId: number): Promise<TaskDetail> {
  const { task, project } = await named(ctx, taskId);
  const related = await ctx.studio.tasks.related(taskId);
  return {
    ...(await libraryItem(ctx, task, project, (await ctx.studio.tasks.scenesOf([taskId])).get(taskId) ?? null, true)),
    events: (await ctx.studio.tasks.events(taskId)).map(eventView),
    dependsOn: related.dependsOn.map((t) => ref(t)),
    dependents: related.dependents.map((t) => ref(t)),
  };
}
