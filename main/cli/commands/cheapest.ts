import { StaleStoryboard } from '../../domain/storyboardRevision.ts';
import { moveToCheapest, moveWords } from '../../pipeline/cheapest.ts';
import { parse, wholeNumber } from '../args.ts';
import type { CliContext } from '../context.ts';
import { UsageError } from '../errors.ts';
import { money } from '../output.ts';
import { withPipeline } from './pipeline.ts';

/**
 * `storyboard cheapest PROJECT [--scene S] [--revision N]`: each new step whose model another provider with a key
 * makes for less, moved there (see pipeline/cheapest.ts). Saves the storyboard only; nothing is bought.
 */
export async function storyboardCheapest(argv: string[], ctx: CliContext) {
  const { values, positionals } = parse(argv, { scene: { type: 'string' }, revision: { type: 'string' } }, 1);
  const name = positionals[0];
  if (!name) throw new UsageError('name the project: studio storyboard cheapest PROJECT [--scene S] [--revision N]');
  const from = values.revision === undefined ? null : wholeNumber(values.revision, '--revision', 0, Number.MAX_SAFE_INTEGER);
  await withPipeline(ctx, async (_pipeline, _studio, deps) => {
    try {
      const done = await moveToCheapest(deps, name, values.scene ?? null, from);
      if (done.moves.length === 0) {
        ctx.out(`${name}: no ${values.scene ? `step of scene "${values.scene}"` : 'step'} is made for less by another provider you have a key for; the storyboard is unchanged (revision ${done.revision})`);
        return;
      }
      for (const m of done.moves) ctx.out(m.sharedWith ? moveWords(m) : `${moveWords(m)}: about ${money(m.before, m.currency)} to ${money(m.after, m.currency)}`);
      const { before, after, currency } = done.total;
      ctx.out(`${name}: storyboard saved, revision ${done.revision}; the new steps now about ${money(after, currency)} against ${money(before, currency)}, about ${money(before - after, currency)} less. Nothing was bought.`);
    } catch (err) {
      if (!(err instanceof StaleStoryboard)) throw err;
      throw new UsageError(`${err.message}. See it with "studio estimate ${name}", then run this again`);
    }
  });
}
