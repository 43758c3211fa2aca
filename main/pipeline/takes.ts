import { existsSync } from 'node:fs';
import type { MediaFolder } from '../media/mediaFolder.ts';
import type { Stores } from '../store/port.ts';
import type { Studio } from '../studio.ts';
import { fromMicros, type Status, type Task } from '../domain/tasks/model.ts';
import { isBill } from '../domain/costBasis.ts';
import type { Decided } from './reuse.ts';
import type { TakeSource } from './planner.ts';
import type { TakeRecord } from '../domain/takeRecord.ts';
import { StoryboardError, type Storyboard } from '../domain/storyboard.ts';
import { MAX_SEED, pickedScene } from './newTakes.ts';
import { ownInScene, withoutOwn, type OwnInScene } from './sceneOwnMedia.ts';

/** A finished result whose file is gone (from this machine's media folder) is no result to build on. */
export const hasOutput = (media: Pick<MediaFolder, 'resolve'>) => (task: Task) => !!task.outputPath && existsSync(media.resolve(task.outputPath));

/** Picking a take that cannot go into a render, or one that does not exist: what to do instead. */
export class TakeRefused extends Error {}

export type TakeKind = 'image' | 'clip' | 'speech';
export type TakeState = 'ready' | 'making' | 'needs your decision' | 'lost' | 'failed' | 'cancelled';

export interface TakeSummary {
  take: TakeRecord;
  picked: boolean;
  /** Its steps with their tasks; `bought` is false for a task an earlier take of the scene made first (reused). */
  steps: { kind: TakeKind; task: Task; bought: boolean }[];
  /** What this take bought, estimated, in micro-units of `currency`; null when no price is known for any of it. */
  costEstimated: number | null;
  /** What this take bought, as billed from the providers' reports; null until a bought step has a billed figure. */
  costBilled: number | null;
  /** What `costBilled` rests on: the providers' bills, counts the studio priced (domain/costBasis.ts), or both. */
  costBilledBasis: BilledBasis | null;
  currency: string;
  state: TakeState;
  /** Why it cannot go into a render, or null. */
  problem: string | null;
  /** When its clip and narration were both made, or null. */
  finishedAt: number | null;
  /** The seed its image and its clip were sent with (null for a step with none, like the creator's own still). */
  seeds: { image: number | null; clip: number | null };
  /** The creator's own still or clip the storyboard names for its scene: then no take of it is in the render. */
  yours: OwnInScene | null;
}

/** The seed a task's input was sent with, or null. */
function seedOf(task: Task | undefined): number | null {
  const input = task?.input as { seed?: unknown } | null | undefined;
  return typeof input?.seed === 'number' ? input.seed : null;
}

const UNDER_WAY: ReadonlySet<Status> = new Set(['PENDING', 'RUNNING', 'SUBMITTED']);

/** What keeps one task of a take out of a render, or null when it has its result or is still making it. */
function problemOf(task: Task, found: (task: Task) => boolean): { state: TakeState; why: string } | null {
  if (task.status === 'SUCCEEDED') return found(task) ? null : { state: 'lost', why: 'its output file is gone' };
  if (UNDER_WAY.has(task.status) || task.status === 'OUTCOME_UNKNOWN') return null;
  if (task.status === 'FAILED') return { state: 'failed', why: `it failed (${task.error ?? 'no reason given'})` };
  return { state: 'cancelled', why: 'it was cancelled' };
}

function stepsOf(take: TakeRecord): { kind: TakeKind; id: number }[] {
  return [
    { kind: 'image', id: take.imageTaskId },
    { kind: 'clip', id: take.clipTaskId },
    ...(take.speechTaskId === null ? [] : [{ kind: 'speech' as const, id: take.speechTaskId }]),
  ];
}

/** The stores a take is read from: its tasks and the takes of its scene; and where its files are. */
type TakeStores = Pick<Stores, 'tasks' | 'takes'> & { media: Pick<MediaFolder, 'resolve'> };

export type BilledBasis = 'billed' | 'counted from usage' | 'billed and counted from usage';

function billedBasis(billed: readonly Task[]): BilledBasis | null {
  if (billed.length === 0) return null;
  const bills = billed.filter(isBill).length;
  return bills === billed.length ? 'billed' : bills === 0 ? 'counted from usage' : 'billed and counted from usage';
}

async function summarize(stores: TakeStores, take: TakeRecord, earlier: readonly TakeRecord[], picked: boolean): Promise<TakeSummary> {
  const before = new Set(earlier.flatMap((t) => stepsOf(t).map((s) => s.id)));
  const steps: TakeSummary['steps'] = [];
  for (const s of stepsOf(take)) steps.push({ kind: s.kind, task: (await stores.tasks.get(s.id))!, bought: !before.has(s.id) });
  // A request the provider refused or never got cost nothing.
  const bought = steps.filter((s) => s.bought && !((s.task.status === 'FAILED' || s.task.status === 'CANCELLED') && s.task.charged === 'no')).map((s) => s.task);
  const estimates = bought.filter((t) => t.costEstimated !== null);
  const billed = bought.filter((t) => t.costActual !== null);
  // The render needs the clip and the narration; the image only until the clip is made from it.
  const rendered = steps.filter((s) => s.kind !== 'image');
  const problem = rendered.map((s) => ({ s, p: problemOf(s.task, hasOutput(stores.media)) })).find((x) => x.p !== null);
  const done = rendered.every((s) => s.task.status === 'SUCCEEDED');
  const state: TakeState = problem
    ? problem.p!.state
    : done
      ? 'ready'
      : rendered.some((s) => s.task.status === 'OUTCOME_UNKNOWN')
        ? 'needs your decision'
        : 'making';
  return {
    take,
    picked,
    steps,
    costEstimated: bought.length > 0 && estimates.length === 0 ? null : estimates.reduce((sum, t) => sum + t.costEstimated!, 0),
    costBilled: billed.length === 0 ? null : billed.reduce((sum, t) => sum + t.costActual!, 0),
    costBilledBasis: billedBasis(billed),
    currency: steps[0]!.task.currency,
    state,
    problem: problem ? `its ${problem.s.kind} (task ${problem.s.task.id}) ${problem.p!.why}` : null,
    finishedAt: done ? Math.max(...rendered.map((s) => s.task.finishedAt ?? 0)) : null,
    seeds: { image: seedOf(steps.find((s) => s.kind === 'image')?.task), clip: seedOf(steps.find((s) => s.kind === 'clip')?.task) },
    yours: null,
  };
}

/**
 * A project's takes, of one scene or all, each with its tasks, what it cost and whether it can go into a render.
 * A scene whose storyboard names the creator's own still or clip renders that, so none of its takes is picked.
 */
export async function describeTakes(stores: TakeStores & Pick<Stores, 'storyboards'>, projectId: number, scene?: string): Promise<TakeSummary[]> {
  const all = await stores.takes.list(projectId, scene);
  const picks = await stores.takes.picks(projectId);
  const board = await storedBoard(stores, projectId);
  const yours = new Map((board?.scenes ?? []).map((s) => [s.id, ownInScene(s)]));
  const summaries: TakeSummary[] = [];
  for (const take of all) {
    const earlier = all.filter((t) => t.scene === take.scene && t.take < take.take);
    const own = yours.get(take.scene) ?? null;
    summaries.push({ ...(await summarize(stores, take, earlier, !own && picks.get(take.scene) === take.take)), yours: own });
  }
  return summaries;
}

/** The picked take of each scene that has one. */
export async function pickedTakes(stores: Pick<Stores, 'takes'>, projectId: number): Promise<Map<string, TakeRecord>> {
  const picks = await stores.takes.picks(projectId);
  return new Map((await stores.takes.list(projectId)).filter((t) => picks.get(t.scene) === t.take).map((t) => [t.scene, t]));
}

/** What the render uses of each of these takes, refusing one whose clip or narration is gone. */
export async function renderSources(stores: TakeStores, takes: ReadonlyMap<string, TakeRecord>): Promise<Map<string, TakeSource>> {
  const sources = new Map<string, TakeSource>();
  for (const [scene, take] of takes) {
    const all = await stores.takes.list(take.projectId, scene);
    const { problem } = await summarize(stores, take, all.filter((t) => t.take < take.take), true);
    if (problem) throw new TakeRefused(`scene "${scene}" take ${take.take}, picked for the render, cannot go into it: ${problem}. Pick another take of it, or make a new take`);
    sources.set(scene, { clip: take.clipTaskId, narration: take.speechTaskId, duration: take.duration });
  }
  return sources;
}

/** The task each step of a decided plan stands for, so far as it is known without enqueueing. */
function knownIds(decided: readonly Decided[]): Map<string, number> {
  const ids = new Map<string, number>();
  for (const { step, verdict } of decided) {
    if (verdict.action === 'reuse') ids.set(step.key, verdict.task.id);
  }
  return ids;
}

/** The take of a scene with exactly these tasks, if it has one. */
export function takeWith(takes: readonly TakeRecord[], scene: string, ids: ReadonlyMap<string, number>): TakeRecord | undefined {
  const image = ids.get(`${scene}:image`);
  const clip = ids.get(`${scene}:clip`);
  const speech = ids.get(`${scene}:speech`) ?? null;
  return takes.find((t) => t.scene === scene && t.imageTaskId === image && t.clipTaskId === clip && t.speechTaskId === speech);
}

/**
 * The picked takes a Generate renders as they are: a scene whose steps are all made already, as an earlier take
 * other than the picked one, keeps its picked take. A scene the Generate makes anew is a new take, picked.
 */
export async function keptTakes(
  stores: Pick<Stores, 'takes'>,
  projectId: number,
  board: Storyboard,
  decided: readonly Decided[],
  picked: ReadonlyMap<string, TakeRecord>,
): Promise<Map<string, TakeRecord>> {
  const ids = knownIds(decided);
  const takes = await stores.takes.list(projectId);
  const kept = new Map<string, TakeRecord>();
  for (const scene of board.scenes) {
    const pick = picked.get(scene.id);
    const keys = decided.filter((d) => d.step.scene === scene.id).map((d) => d.step.key);
    if (!pick || keys.length === 0 || !keys.every((k) => ids.has(k))) continue;
    const same = takeWith(takes, scene.id, ids);
    if (same && same.take !== pick.take) kept.set(scene.id, pick);
  }
  return kept;
}

/**
 * Records as a new take, and picks, each scene of the storyboard whose tasks (`ids`, by step key) are no take
 * of it yet. Called in the transaction that enqueued them; returns the takes added.
 */
export async function recordTakes(
  stores: Pick<Stores, 'takes'>,
  projectId: number,
  board: Storyboard,
  seeds: ReadonlyMap<string, number>,
  ids: ReadonlyMap<string, number>,
  now: number,
): Promise<TakeRecord[]> {
  const takes = await stores.takes.list(projectId);
  const added: TakeRecord[] = [];
  for (const scene of board.scenes) {
    const image = ids.get(`${scene.id}:image`);
    const clip = ids.get(`${scene.id}:clip`);
    if (image === undefined || clip === undefined || takeWith(takes, scene.id, ids)) continue;
    const take = await stores.takes.add({
      projectId,
      scene: scene.id,
      variant: scene.take,
      imagePrompt: scene.imagePrompt,
      motionPrompt: scene.motionPrompt,
      narration: scene.narration,
      duration: scene.duration,
      seed: seeds.get(scene.id)!,
      imageTaskId: image,
      clipTaskId: clip,
      speechTaskId: ids.get(`${scene.id}:speech`) ?? null,
      createdAt: now,
    });
    await stores.takes.pick(projectId, scene.id, take.take, now);
    added.push(take);
  }
  return added;
}

/** The storyboard, or undefined when there is none or it no longer passes the checks (then it is left as it is). */
async function storedBoard(stores: Pick<Stores, 'storyboards'>, projectId: number): Promise<Storyboard | undefined> {
  try {
    return await stores.storyboards.get(projectId);
  } catch (err) {
    if (err instanceof StoryboardError) return undefined;
    throw err;
  }
}

/**
 * Makes `take` the one of its scene that goes into the render. Buys nothing. The storyboard's take number
 * follows it, so a Generate that changes nothing else in the scene makes nothing new for it; the creator's own
 * still or clip the scene had is taken out of it (`replaced`), so the take, not that, is rendered.
 */
export async function pickTake(studio: Studio, projectName: string, scene: string, take: number): Promise<TakeSummary & { replaced: OwnInScene | null }> {
  const project = await studio.projects.byName(projectName);
  if (!project) throw new TakeRefused(`there is no project "${projectName}"`);
  return studio.store.transaction(async (tx) => {
    // Held like a Generate holds it, so a pick and a Generate's new take go one after the other on every store.
    await tx.projects.lock(project.id);
    const revision = await tx.storyboards.revision(project.id);
    const takes = await tx.takes.list(project.id, scene);
    if (takes.length === 0) {
      const scenes = [...new Set((await tx.takes.list(project.id)).map((t) => t.scene))];
      throw new TakeRefused(`scene "${scene}" of "${projectName}" has no takes${scenes.length ? `; the scenes with takes are ${scenes.join(', ')}` : ' yet: run a Generate first'}`);
    }
    const chosen = takes.find((t) => t.take === take);
    if (!chosen) throw new TakeRefused(`scene "${scene}" has no take ${take}; its takes are ${takes.map((t) => t.take).join(', ')}`);
    const summary = await summarize({ ...tx, media: studio.media }, chosen, takes.filter((t) => t.take < take), true);
    if (summary.problem) throw new TakeRefused(`scene "${scene}" take ${take} cannot go into the render: ${summary.problem}. Pick another take, or make a new one`);
    const now = studio.clock.now();
    await tx.takes.pick(project.id, scene, take, now);
    const board = await storedBoard(tx, project.id);
    const at = board?.scenes.findIndex((s) => s.id === scene) ?? -1;
    // Its seeds too: a take of the clip only kept an earlier still's seed, which the take number alone does not give.
    const before = board?.scenes[at];
    const replaced = before ? ownInScene(before) : null;
    const scenePicked = before && pickedScene(withoutOwn(before), chosen.variant, summary.seeds);
    const past = scenePicked && [scenePicked.imageSeed, scenePicked.clipSeed].find((seed) => seed !== undefined && seed > MAX_SEED);
    if (past !== undefined) throw new TakeRefused(`scene "${scene}" take ${take} was made with seed ${past}, past the largest a storyboard holds (${MAX_SEED}), so the storyboard cannot name it; pick another take, or make a new one`);
    const same = (a: Storyboard['scenes'][number], b: typeof a) => a.take === b.take && a.imageSeed === b.imageSeed && a.clipSeed === b.clipSeed;
    if (board && before && scenePicked && (replaced || !same(before, scenePicked))) {
      await tx.storyboards.save(project.id, { ...board, scenes: board.scenes.map((s, i) => (i === at ? scenePicked : s)) }, now, revision);
    }
    return { ...summary, replaced };
  });
}

/** A take as the API and `studio takes --json` give it: money in currency units, times in ISO 8601. */
export function takeAsJson(t: TakeSummary) {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    scene: t.take.scene,
    take: t.take.take,
    picked: t.picked,
    state: t.state,
    problem: t.problem,
    imagePrompt: t.take.imagePrompt,
    motionPrompt: t.take.motionPrompt,
    narration: t.take.narration,
    duration: t.take.duration,
    seed: t.take.seed,
    imageSeed: t.seeds.image,
    clipSeed: t.seeds.clip,
    yours: t.yours,
    steps: t.steps.map((s) => ({ kind: s.kind, taskId: s.task.id, provider: s.task.provider, model: s.task.model, status: s.task.status, reused: !s.bought })),
    costEstimated: fromMicros(t.costEstimated),
    costBilled: fromMicros(t.costBilled),
    costBilledBasis: t.costBilledBasis,
    currency: t.currency,
    createdAt: iso(t.take.createdAt)!,
    finishedAt: iso(t.finishedAt),
  };
}
