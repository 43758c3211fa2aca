import { describeTakes, pickTake, takeAsJson, TakeRefused, type TakeSummary } from '../../pipeline/takes.ts';
import { ownWords } from '../../pipeline/sceneOwnMedia.ts';
import { clipsFromOwnStill } from '../../pipeline/ownStillClips.ts';
import { isSimulated } from '../../domain/simulated.ts';
import { StaleStoryboard } from '../../domain/storyboardRevision.ts';
import { openStudio, type Studio } from '../../studio.ts';
import { parse, wholeNumber } from '../args.ts';
import { UsageError } from '../errors.ts';
import type { CliContext } from '../context.ts';
import { iso, money, table } from '../output.ts';

/** "simulator: sim-image-1, sim-clip-1", or each step's provider where they differ. */
function makers(t: TakeSummary): string {
  const providers = new Set(t.steps.map((s) => s.task.provider));
  if (providers.size === 1) return `${t.steps[0]!.task.provider}: ${t.steps.map((s) => s.task.model).join(', ')}`;
  return t.steps.map((s) => `${s.task.provider} ${s.task.model}`).join(', ');
}

/** One seed when the image and clip were sent the same, else each ("image 12, clip 7931"). */
function seedWords(t: TakeSummary): string {
  const { image, clip } = t.seeds;
  if (image === clip || image === null) return String(clip ?? t.take.seed);
  return `image ${image}, clip ${clip ?? '-'}`;
}

function cost(t: TakeSummary): string {
  if (t.steps.every((s) => !s.bought)) return 'reused';
  const sim = t.steps.filter((s) => s.bought && isSimulated(s.task.provider)).length;
  // The simulator's made-up money is never charged: said so beside the figure, never summed in unsaid.
  const mark = sim === 0 ? '' : sim === t.steps.filter((s) => s.bought).length ? ' (simulated)' : ' (partly simulated)';
  if (t.costBilled !== null) return `${money(t.costBilled, t.currency)} ${t.costBilledBasis}${mark}`;
  return t.costEstimated === null ? 'price unknown' : `${money(t.costEstimated, t.currency)} estimated${mark}`;
}

/** The clips bought from each scene's own still, which are no takes: listed by task, with how to use one. */
async function ownStillClipLines(studio: Studio, projectId: number, name: string, only: string | undefined, ctx: CliContext): Promise<number> {
  const board = await studio.storyboards.get(projectId).catch(() => undefined);
  const tasks = await studio.tasks.list({ projectId });
  let lines = 0;
  for (const scene of (board?.scenes ?? []).filter((s) => only === undefined || s.id === only)) {
    const clips = clipsFromOwnStill(tasks, scene);
    if (clips.length === 0) continue;
    const listed = clips.map((t) => `task ${t.id} (${t.status.toLowerCase()})`).join(', ');
    ctx.out(`${scene.id}: clips made from your own picture, paid for and kept though no takes: ${listed}; "clip": {"task": N} in scene ${scene.id} of ${name}'s storyboard uses one as it is`);
    lines++;
  }
  return lines;
}

/** `takes PROJECT [SCENE] [--json]`: every take of each scene, and which one the render uses. */
export async function takes(argv: string[], ctx: CliContext) {
  const { values, positionals } = parse(argv, { json: { type: 'boolean' } }, 2);
  const [name, scene] = positionals;
  if (!name) throw new UsageError('name the project: studio takes PROJECT [SCENE]');
  const studio = await openStudio(ctx.dataDir, undefined, { existing: true, database: ctx.database, media: ctx.media });
  try {
    const project = await studio.projects.byName(name);
    if (!project) throw new UsageError(`there is no project "${name}"`);
    const list = await describeTakes(studio, project.id, scene);
    if (scene !== undefined && list.length === 0 && !values.json && (await ownStillClipLines(studio, project.id, name, scene, ctx)) > 0) return;
    if (scene !== undefined && list.length === 0) {
      const scenes = [...new Set((await studio.takes.list(project.id)).map((t) => t.scene))];
      throw new UsageError(`scene "${scene}" has no takes${scenes.length ? `; the scenes with takes are ${scenes.join(', ')}` : ' yet: run "studio generate" first'}`);
    }
    if (values.json) {
      ctx.out(JSON.stringify(list.map(takeAsJson), null, 2));
      return;
    }
    if (list.length === 0) {
      ctx.out(`${name} has no takes yet; "studio generate ${name}" makes the first of each scene.`);
      await ownStillClipLines(studio, project.id, name, scene, ctx);
      return;
    }
    ctx.out(
      table([
        ['SCENE', 'TAKE', 'PICKED', 'PROMPT', 'PROVIDER/MODEL', 'SEED', 'COST', 'WHEN', 'STATUS'],
        ...list.map((t) => [
          t.take.scene,
          String(t.take.take),
          t.picked ? 'picked' : '',
          t.take.imagePrompt.length > 40 ? `${t.take.imagePrompt.slice(0, 39)}…` : t.take.imagePrompt,
          makers(t),
          seedWords(t),
          cost(t),
          iso(t.take.createdAt)!.slice(0, 16).replace('T', ' '),
          t.problem ? `${t.state}: ${t.problem}` : t.state,
        ]),
      ]),
    );
    // A scene with the creator's own still or clip renders that: said once per scene, with how to put a take back.
    for (const t of list.filter((t, i) => t.yours && list.findIndex((u) => u.take.scene === t.take.scene) === i)) {
      ctx.out(`${t.take.scene}: ${ownWords(t.yours!)} is used, no take; "studio pick ${name} ${t.take.scene} TAKE" puts a take back in the render`);
    }
    await ownStillClipLines(studio, project.id, name, scene, ctx);
  } finally {
    await studio.close();
  }
}

/** `pick PROJECT SCENE TAKE`: the take of a scene the render uses. Buys nothing. */
export async function pick(argv: string[], ctx: CliContext) {
  const { positionals } = parse(argv, {}, 3);
  const [name, scene, given] = positionals;
  if (!name || !scene || given === undefined) throw new UsageError('use: studio pick PROJECT SCENE TAKE, for example studio pick Fox dawn 1');
  const take = wholeNumber(given, 'TAKE', 1, 1_000_000);
  const studio = await openStudio(ctx.dataDir, undefined, { existing: true, database: ctx.database, media: ctx.media });
  try {
    const picked = await pickTake(studio, name, scene, take);
    const back = picked.replaced ? ` in place of ${ownWords(picked.replaced)}, which the storyboard no longer names; nothing was bought` : '';
    ctx.out(`${name}: scene ${scene} renders take ${take} (${picked.state})${back}; "studio render ${name}" renders it`);
  } catch (err) {
    if (err instanceof TakeRefused) throw new UsageError(err.message);
    if (err instanceof StaleStoryboard) throw new UsageError(`${new StaleStoryboard(name, err.from, err.current).message}; nothing was picked, pick again`);
    throw err;
  } finally {
    await studio.close();
  }
}
