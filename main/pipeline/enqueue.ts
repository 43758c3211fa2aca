/** The enqueue transaction of a Generate: judges every step again, checks keys, lost results and budget, then enqueues. */
import type { Decided } from './reuse.ts';
import { movedWords, ProjectMoved } from '../domain/projectMoved.ts';
import type { Project } from '../domain/project.ts';
import type { Storyboard } from '../domain/storyboard.ts';
import { StaleStoryboard } from '../domain/storyboardRevision.ts';
import type { Stores } from '../store/port.ts';
import { decide } from './decide.ts';
import type { GenerateEstimate } from './estimate.ts';
import { reusedPrice, stepEstimate } from './estimateRows.ts';
import type { GenerateOptions, PipelineDeps } from './generateOptions.ts';
import { stepSeed } from './newTakes.ts';
import type { OwnScenes } from './ownScenes.ts';
import { bindStepRefs } from './planner.ts';
import { summed } from './pricing.ts';
import { GenerateRefused, GenerateStale, LostResultsRefused, MissingKeysRefused, OtherCurrencyRefused, OverBudgetRefused, UnpricedRefused } from './refusals.ts';
import { sameTakes } from './sameTakes.ts';
import { recordTakes } from './takes.ts';
import { recordVariations, variationScenes } from './variations.ts';

/** What a Generate priced outside the transaction, and what it is to enqueue. */
export interface PricedGenerate {
  projectName: string;
  named: Project;
  saved: Storyboard;
  /** The revision `saved` was read at: the storyboard saved since makes this Generate a conflict (GenerateStale). */
  revision: number;
  board: Storyboard;
  own: OwnScenes;
  priced: GenerateEstimate;
  options: GenerateOptions;
  now: number;
}

/**
 * Run inside one write transaction holding the project: a Generate priced meanwhile by another is seen here, so
 * the second reuses what the first enqueued, and is judged against what it spent.
 */
/** The steps a render would have to buy first: every one not already in the project. */
export const notMade = (decided: readonly Decided[]): string[] => decided.filter((d) => d.step.kind !== 'render' && d.verdict.action !== 'reuse').map((d) => d.step.key);

export async function enqueuePriced(deps: PipelineDeps, tx: Stores, { projectName, named, saved, revision, board, own, priced, options, now }: PricedGenerate): Promise<GenerateEstimate> {
  const project = await tx.projects.lock(named.id);
  if (!project) throw new GenerateRefused(`there is no project "${projectName}"`);
  if (project.moved) throw new ProjectMoved(movedWords(project.moved));
  const decided = await decide(deps, project, board, options, tx, own);
  // A render buys nothing, whatever was saved since it was asked for: here, where steps are enqueued, not before.
  const unmade = options.renderOnly ? notMade(decided) : [];
  if (unmade.length > 0) throw new GenerateRefused(`${unmade.join(', ')} not made yet: generate them first; nothing was enqueued`);
  const mineRows = priced.steps.filter((s) => s.action === 'yours');
  const steps = decided.map(({ step, verdict }) => {
    const before = priced.steps.find((s) => s.key === step.key)!;
    if (verdict.action === 'reuse') {
      const price = reusedPrice(verdict.task, verdict.why, project.currency);
      if (before.action !== 'reuse') price.source = `reused: task ${verdict.task.id}, enqueued by another Generate while this one was being priced`;
      return stepEstimate(step, verdict, price);
    }
    if (before.action === 'reuse') {
      throw new GenerateRefused(`step ${step.key}: task ${before.taskId} changed while this Generate was being priced; nothing was enqueued, try again`);
    }
    const row = stepEstimate(step, verdict, { cost: before.cost, currency: before.currency, source: before.source }, before.keyMissing);
    return before.forecast ? { ...row, forecast: before.forecast } : row;
  });
  const estimate = { ...(await summed(project, [...mineRows, ...steps], tx, deps.studio.settings.budgetUsesForecast)), balances: priced.balances, narration: priced.narration, shape: priced.shape };
  if (estimate.missingKeys.length > 0) throw new MissingKeysRefused(estimate.missingKeys);
  const lost = steps.filter((s) => s.action === 'rebuy' && s.sameAs === undefined);
  if (lost.length > 0 && !options.rebuyLost) throw new LostResultsRefused(lost);
  if (project.budget !== null && estimate.unpriced.length > 0 && !options.confirmUnpriced) throw new UnpricedRefused(estimate.unpriced);
  if (project.budget !== null && estimate.otherCurrencies.length > 0) throw new OtherCurrencyRefused(estimate.otherCurrencies, project.currency);
  if (estimate.overBy > 0) {
    const { held } = estimate;
    const real = { spent: estimate.spent - estimate.spentSimulated + held.earlier - held.earlierSimulated, added: held.total - held.simulated };
    const simulated = { spent: estimate.spentSimulated + held.earlierSimulated, added: held.simulated };
    throw new OverBudgetRefused(project.budget!, real, simulated, project.currency, { steps: held.byForecast, earlier: held.earlier > 0 });
  }
  // Checked last before anything is written, so a refusal a retry would meet too (the budget) is the one said.
  const current = await tx.storyboards.revision(project.id);
  if (current !== revision) throw new GenerateStale(projectName, revision, current);
  // A library image stands as its scene's image task, so the take made from it names it.
  const ids = new Map<string, number>([...own.stills].flatMap(([scene, still]) => ('$output' in still.ref ? [[`${scene}:image`, still.ref.$output] as const] : [])));
  for (const [i, { step, verdict }] of decided.entries()) {
    if (verdict.action === 'reuse') {
      ids.set(step.key, verdict.task.id);
      continue;
    }
    if (step.sameAs !== undefined) {
      ids.set(step.key, ids.get(step.sameAs)!);
      steps[i]!.taskId = ids.get(step.key)!;
      continue;
    }
    const input = bindStepRefs(step.input, ids) as Record<string, unknown>;
    const task = await tx.tasks.enqueue(
      {
        projectId: project.id,
        kind: step.kind,
        provider: step.provider,
        model: step.model,
        input,
        // Two steps of one purchase (sameSteps.ts), or two scenes reusing one task, are one dependency.
        dependsOn: [...new Set([...step.dependsOn.map((k) => ids.get(k)!), ...(step.dependsOnTasks ?? [])])],
        estimate: { cost: steps[i]!.cost, source: steps[i]!.source, currency: steps[i]!.currency },
      },
      now,
    );
    ids.set(step.key, task.id);
    steps[i]!.taskId = task.id;
  }
  const { board: kept, same } = await sameTakes(tx, project.id, board, options.newTakes ?? [], ids);
  if (kept !== saved) {
    await tx.storyboards.save(project.id, kept, now, revision).catch((err: unknown) => {
      throw err instanceof StaleStoryboard ? new GenerateStale(projectName, revision, err.current) : err;
    });
  }
  const seeds = new Map(kept.scenes.map((s) => [s.id, stepSeed(s, 'clip')]));
  const added = await recordTakes(tx, project.id, kept, seeds, ids, now);
  for (const t of same) await tx.takes.pick(project.id, t.scene, t.take, now);
  added.push(...(await recordVariations(tx, project.id, board, variationScenes(board, options.newTakes ?? [], options.take ?? {}), ids, now)));
  estimate.takes = [...same.map((t) => ({ scene: t.scene, take: t.take, already: t.seeds })), ...added.map((t) => ({ scene: t.scene, take: t.take }))];
  return estimate;
}
