import { describeTakes, pickTake, takeAsJson, TakeRefused, type TakeSummary } from '../../pipeline/takes.ts';
import { openStudio } from '../../studio.ts';
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

function cost(t: TakeSummary): string {
  if (t.steps.every((s) => !s.bought)) return 'reused';
  if (t.costBilled !== null) return `${money(t.costBilled, t.currency)} billed`;
  return t.costEstimated === null ? 'price unknown' : `${money(t.costEstimated, t.currency)} estimated`;
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
          String(t.take.seed),
          cost(t),
          iso(t.take.createdAt)!.slice(0, 16).replace('T', ' '),
          t.problem ? `${t.state}: ${t.problem}` : t.state,
        ]),
      ]),
    );
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
    ctx.out(`${name}: scene ${scene} renders take ${take} (${picked.state}); "studio render ${name}" renders it`);
  } catch (err) {
    if (err instanceof TakeRefused) throw new UsageError(err.message);
    throw err;
  } finally {
    await studio.close();
  }
}
