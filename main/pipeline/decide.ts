/** The decision of each step of a Generate: which the project already has (reuse), and what the render takes. */
import type { Project } from '../domain/project.ts';
import type { Storyboard } from '../domain/storyboard.ts';
import type { TakeRecord } from '../domain/takeRecord.ts';
import type { Task } from '../domain/tasks/model.ts';
import { inputHash } from '../domain/tasks/inputHash.ts';
import type { Stores } from '../store/port.ts';
import type { GenerateOptions, PipelineDeps } from './generateOptions.ts';
import { bindStepRefs, planRender, planScenes, RENDER_PROVIDER, type PlannedStep } from './planner.ts';
import { GenerateRefused } from './refusals.ts';
import { coveringWhy, formerWhy } from './formerWords.ts';
import { resultPlaces } from './resultPlaces.ts';
import { decidePlan, judgeStep, UNDER_WAY, type Decided, type Verdict } from './reuse.ts';
import { refsOf, type OwnScenes } from './ownScenes.ts';
import { keptTakes, pickedTakes, renderSources, TakeRefused } from './takes.ts';
import { variationScenes, variationSteps } from './variations.ts';

/**
 * Judges every step of the plan by the tasks the project has now; reads only, with no network. The render
 * uses each scene's picked take: a render alone plans no scene that has one, and a Generate renders what it
 * makes anew (a new take, picked) and, for a scene it makes nothing new for, the picked take as it is.
 * `stores`: read from, the studio's or a transaction's.
 */
export async function decide(deps: PipelineDeps, project: Project, board: Storyboard, options: GenerateOptions, stores: Stores, own: OwnScenes): Promise<Decided[]> {
  const judge = async (step: PlannedStep, input: unknown, former?: unknown, longer: unknown[] = []): Promise<Verdict> => {
    if (options.freshRender && step.kind === 'render') return { action: 'new' };
    const same = (i: unknown) => stores.tasks.withSameInput(project.id, inputHash(step.provider, step.model, i));
    const unsized = former === undefined ? [] : await same(former);
    // A longer clip stands in only while it is there or on its way: a lost one is no reason to ask to buy again.
    const covering = (await Promise.all(longer.map(same))).flat().filter((t) => t.status === 'SUCCEEDED' || UNDER_WAY.has(t.status));
    const earlier = [...(await same(input)), ...unsized, ...covering];
    const places = await resultPlaces(stores.tasks, deps.studio.media, earlier);
    const finished = (t: Task) => t.status !== 'SUCCEEDED' || places.get(t.id)!.at === 'here';
    const verdict = judgeStep(earlier.filter((t) => !covering.includes(t) || finished(t)), (t) => places.get(t.id)!, step.provider !== RENDER_PROVIDER);
    if (verdict.action !== 'reuse') return verdict;
    if (unsized.includes(verdict.task)) return { ...verdict, why: formerWhy(step) };
    if (covering.includes(verdict.task)) return { ...verdict, why: coveringWhy(verdict.task) };
    return verdict;
  };
  const picked = await pickedTakes(stores, project.id);
  const exported = options.preset ? { preset: options.preset, project: project.name } : undefined;
  // A scene shown as its still renders its still, not a take's clip.
  const alone = new Map(options.renderOnly ? [...picked].filter(([scene]) => board.scenes.some((s) => s.id === scene && s.motion === undefined) && !own.clips.has(scene)) : []);
  const clips = refsOf(own.clips);
  const plan = (b: Storyboard, skip = new Set<string>()) => planScenes(b, deps.defaults, skip, refsOf(own.stills), clips);
  const scenes = plan(board, new Set(alone.keys()));
  const extra = variationSteps(variationScenes(board, options.newTakes ?? [], options.take ?? {}), scenes, (s) => plan({ ...board, scenes: [s] }));
  const decided = await decidePlan([...scenes, ...extra, planRender(board, await sources(deps, stores, alone), clips, own.music?.ref, refsOf(own.stills), exported)], judge);
  const kept = options.renderOnly ? new Map<string, TakeRecord>() : await keptTakes(stores, project.id, board, decided, picked);
  // A new take asked for that an earlier take is becomes the picked one (sameTakes.ts): rendered, not kept out.
  for (const scene of options.newTakes ?? []) kept.delete(scene);
  if (kept.size === 0) return decided;
  const render = planRender(board, await sources(deps, stores, kept), clips, own.music?.ref, refsOf(own.stills), exported);
  const ids = new Map(decided.flatMap(({ step, verdict }) => (verdict.action === 'reuse' ? [[step.key, verdict.task.id] as const] : [])));
  const input = bindStepRefs(render.input, ids);
  return [...decided.slice(0, -1), { step: render, verdict: input === undefined ? { action: 'new' } : await judge(render, input) }];
}

/** What the render takes from each picked take; one whose result is gone is refused, saying which. */
async function sources(deps: PipelineDeps, stores: Stores, takes: ReadonlyMap<string, TakeRecord>) {
  try {
    return await renderSources({ ...stores, media: deps.studio.media }, takes);
  } catch (err) {
    if (err instanceof TakeRefused) throw new GenerateRefused(err.message);
    throw err;
  }
}
