import { readFileSync } from 'node:fs';
import { lookedFor } from '../../media/outputWords.ts';
import { missingKeysWords } from '../../pipeline/missingKeys.ts';
import { narrationWords } from '../../pipeline/narrationLengths.ts';
import { readPreset, type Preset } from '../../domain/presets.ts';
import { GenerateRefused, Pipeline } from '../../pipeline/generate.ts';
import type { GenerateEstimate, StepEstimate } from '../../pipeline/estimate.ts';
import type { PipelineDeps } from '../../pipeline/generateOptions.ts';
import { cheaperOffer } from '../../pipeline/sameModelOffers.ts';
import { describeLost, forecastWords, LostResultsRefused, UnpricedRefused } from '../../pipeline/refusals.ts';
import { StoryboardError } from '../../domain/storyboard.ts';
import { splitRevision, StaleStoryboard } from '../../domain/storyboardRevision.ts';
import { parseStoryboard } from '../../providers/storyboards.ts';
import { openProviders } from '../../providers/registry.ts';
import { openStudio, type Studio } from '../../studio.ts';
import { toMicros } from '../../domain/tasks/model.ts';
import { parseJsonInput } from '../../input/json.ts';
import { amount, parse, wholeNumber } from '../args.ts';
import { MAX_VARIATIONS, readTakeChoice, type TakeChoice } from '../../pipeline/newTakes.ts';
import { UsageError } from '../errors.ts';
import type { CliContext } from '../context.ts';
import { money, table } from '../output.ts';
import { POSSIBLY_CHARGED_WORDS } from '../../domain/money.ts';

function projectArg(positionals: string[], usage: string): string {
  const name = positionals[0];
  if (!name) throw new UsageError(`name the project: ${usage}`);
  return name;
}

function readStoryboard(file: string | undefined) {
  if (!file) throw new UsageError('--file is required: the storyboard JSON (see the README for its form)');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`${file} could not be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  let json: unknown;
  try {
    json = parseJsonInput(text, file);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  try {
    const { from, board } = splitRevision(json);
    return { from, board: parseStoryboard(board) };
  } catch (err) {
    if (err instanceof StoryboardError) throw new UsageError(`${file}: ${err.message}`);
    throw err;
  }
}

export async function withPipeline<T>(ctx: CliContext, fn: (pipeline: Pipeline, studio: Studio, deps: PipelineDeps) => Promise<T>): Promise<T> {
  const studio = await openStudio(ctx.dataDir, undefined, { existing: true, database: ctx.database, media: ctx.media });
  const providers = await openProviders(studio.settings, studio.dataDir);
  try {
    const deps: PipelineDeps = { studio, provider: providers.get, defaults: studio.settings.defaults, prices: () => studio.settings.prices };
    return await fn(new Pipeline(deps), studio, deps);
  } catch (err) {
    // A refused Generate, a scene that does not exist, a stored storyboard that no longer passes: what to fix.
    // A storyboard saved while it was priced (GenerateStale): a conflict, said as a stale save is.
    if (err instanceof GenerateRefused || err instanceof StoryboardError || err instanceof StaleStoryboard) throw new UsageError(err.message);
    throw err;
  } finally {
    await providers.close();
    await studio.close();
  }
}

/** A step's cost, marked when it is the simulator's made-up money or waits for a key. */
function costWords(s: StepEstimate): string {
  const cost = s.cost === null ? 'price unknown' : `${money(s.cost, s.currency)}${s.simulated && s.action !== 'reuse' ? ' (simulated)' : ''}`;
  return s.keyMissing ? `${cost}, no key yet` : cost;
}

/** `lostNote` says what happens to a step whose paid result was lost. */
function printEstimate(ctx: CliContext, e: GenerateEstimate, lostNote: string): void {
  const c = e.project.currency;
  ctx.out(
    table([
      ['STEP', 'DOES', 'PROVIDER', 'MODEL', 'COST', 'WHERE THE FIGURE COMES FROM'],
      ...e.steps.map((s) => [s.key, s.action === 'reuse' ? `reuse ${s.taskId}` : s.sameAs ? `as ${s.sameAs}` : s.action, s.provider, s.model, costWords(s), s.source]),
    ]),
  );
  for (const s of e.steps) if (s.lost) ctx.out(`${s.key}: ${describeLost(s.lost)}; ${lostNote}.`);
  for (const s of e.steps) if (s.forecast) ctx.out(`${s.key}: ${s.provider} ${s.model} ${s.forecast.words}: forecast ${money(s.forecast.cost, s.currency)}.`);
  for (const s of e.steps) {
    for (const o of s.offers ?? []) {
      const price = o.cost === null ? 'price unknown' : `${money(o.cost, o.currency)} (${o.source})`;
      const together = o.scenes.length > 1 ? ` (scenes ${o.scenes.join(', ')} move together: one purchase)` : '';
      const move =
        cheaperOffer(s) === o
          ? `cheaper: about ${money(o.saving!, c)} less in all${together}; move to it with "studio storyboard cheapest ${e.project.name} --scene ${s.scene}"`
          : o.saving === null
            ? 'not weighed against the whole plan here'
            : 'not cheaper';
      ctx.out(`${s.key}: the same model (${o.family}) at ${o.provider} ${o.model}: ${price}; ${o.notOffered ?? move}.`);
    }
  }
  const unknown = e.unpriced.length ? `, plus ${e.unpriced.length} step(s) of unknown price, not counted` : '';
  const earlier = e.spentUnpriced ? ` (and ${e.spentUnpriced} earlier step(s) of unknown price, not in that figure)` : '';
  const spentSim = e.spentSimulated > 0 ? `, and ${money(e.spentSimulated, c)} simulated (never charged)` : '';
  ctx.out(`\nNew steps: about ${money(e.total, c)}${unknown}. Already spent or possibly charged: ${money(e.spent - e.spentSimulated, c)}${earlier}${spentSim}.`);
  if (e.otherCurrencies.length > 0) {
    ctx.out(`Priced in another currency than ${c}, not added to it: ${e.otherCurrencies.map((o) => `about ${money(o.total, o.currency)}`).join(', ')}.`);
  }
  ctx.out(POSSIBLY_CHARGED_WORDS);
  if (e.simulatedTotal > 0) {
    ctx.out(`Of the new steps, ${money(e.simulatedTotal, c)} is simulated (the simulator's made-up prices, never charged) and ${money(e.total - e.simulatedTotal, c)} is real money.`);
  }
  if (e.missingKeys.length > 0) ctx.out(`Missing keys: ${missingKeysWords(e.missingKeys)}. Generate asks for them before it buys anything.`);
  for (const b of e.balances) ctx.out(`${b.over ? 'Warning: ' : ''}${b.provider}: ${b.text}.`);
  for (const n of e.narration) ctx.out(`${n.cutSec > 0 ? 'Warning: ' : ''}${narrationWords(n)}.`);
  for (const s of e.shape) ctx.out(`Shape: ${s}.`);
  if (e.film) ctx.out(`The film: ${e.film.words}.`);
  if (e.budget !== null) {
    const by = { steps: e.held.byForecast, earlier: e.held.earlier > 0 };
    const byForecast = by.steps || by.earlier ? `, ${forecastWords(by)} (settings "budgetUsesForecast")` : '';
    ctx.out(
      e.overBy > 0
        ? `Budget ${money(e.budget, c)}: this would go ${money(e.overBy, c)} over it${byForecast}.`
        : `Budget ${money(e.budget, c)}: ${money(e.left, c)} would be left${byForecast}${e.unpriced.length ? ', before the steps of unknown price' : ''}.`,
    );
    if (e.spentSimulated + e.simulatedTotal > 0) ctx.out(`Simulated money is held against the budget apart from real money: it never uses up what is there for real spending.`);
    if (e.unpriced.length) ctx.out(`The steps of unknown price need "--confirm-unpriced" (or a price in settings "prices") to be generated under a budget.`);
  }
}

function revisionArg(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n)) throw new UsageError(`--revision is the whole number of the saved storyboard the file was made from (0 for a new one), not "${text}"`);
  return n;
}

/**
 * `storyboard create|edit PROJECT --file F [--revision N]`, `storyboard show PROJECT [--json]`. An edit names the
 * revision it was made from (the file's "revision", as `show --json` prints it, or --revision); an older one is refused.
 */
export async function storyboard(argv: string[], ctx: CliContext) {
  const [action, ...rest] = argv;
  const { values, positionals } = parse(rest, { file: { type: 'string' }, json: { type: 'boolean' }, revision: { type: 'string' } }, 1);
  if (action !== 'create' && action !== 'edit' && action !== 'show') throw new UsageError('use: studio storyboard create|edit PROJECT --file F, show PROJECT, or cheapest PROJECT [--scene S]');
  const name = projectArg(positionals, `studio storyboard ${action} PROJECT`);
  const studio = await openStudio(ctx.dataDir, undefined, { existing: action !== 'create', database: ctx.database, media: ctx.media });
  try {
    if (action === 'show') {
      const project = await studio.projects.byName(name);
      // The revision first: printed beside a newer board, an edit made from it is refused, never let through.
      const revision = project ? await studio.storyboards.revision(project.id) : 0;
      const raw = project && (await studio.storyboards.raw(project.id));
      if (raw === undefined) throw new UsageError(`project "${name}" has no storyboard`);
      let board;
      try {
        board = parseStoryboard(raw);
      } catch (err) {
        if (!(err instanceof StoryboardError)) throw err;
        // Shown as stored, so it can be mended and saved again with "edit".
        ctx.err(`studio: this storyboard no longer passes the checks (${err.message}); fix it and save it with "studio storyboard edit ${name} --file F"`);
        ctx.out(JSON.stringify({ ...(raw as object), revision }, null, 2));
        return;
      }
      if (values.json) {
        ctx.out(JSON.stringify({ ...board, revision }, null, 2));
        return;
      }
      ctx.out(`${name}: ${board.width}x${board.height} at ${board.fps} fps, ${board.scenes.reduce((s, x) => s + x.duration, 0)} s, revision ${revision}`);
      ctx.out(table([['SCENE', 'SECONDS', 'TAKE', 'IMAGE', 'NARRATION'], ...board.scenes.map((s) => [s.id, String(s.duration), String(s.take), s.imagePrompt, s.narration ?? ''])]));
      return;
    }
    const { from: inFile, board } = readStoryboard(values.file);
    // A new storyboard is made from none, whatever the file says (an export of another project's carries its revision).
    const from = action === 'create' ? 0 : values.revision === undefined ? inFile : revisionArg(values.revision);
    const existing = await studio.projects.byName(name);
    const has = existing && (await studio.storyboards.raw(existing.id)) !== undefined;
    if (action === 'create' && has) throw new UsageError(`project "${name}" already has a storyboard; use "studio storyboard edit"`);
    if (action === 'edit' && !has) throw new UsageError(`project "${name}" has no storyboard yet; use "studio storyboard create"`);
    const now = studio.clock.now();
    let revision: number;
    try {
      revision = await studio.store.transaction(async (tx) => tx.storyboards.save((await tx.projects.ensure(name, now)).id, board, now, from));
    } catch (err) {
      if (!(err instanceof StaleStoryboard)) throw err;
      throw new UsageError(
        `${new StaleStoryboard(name, err.from, err.current).message}. See it with "studio storyboard show ${name} --json"; to save this file over it anyway, add --revision ${err.current}`,
      );
    }
    ctx.out(action === 'create' ? `${name}: storyboard created with ${board.scenes.length} scene(s)` : `${name}: storyboard saved with ${board.scenes.length} scene(s), revision ${revision}`);
  } finally {
    await studio.close();
  }
}

const TAKE_FLAGS = { only: { type: 'string' }, seed: { type: 'string' }, variations: { type: 'string' } } as const;

/** `--only`, `--seed` and `--variations` of a new take, checked (see newTakes.ts). */
function takeChoice(values: { only?: string; seed?: string; variations?: string }): TakeChoice {
  const number = (v: string | undefined, what: string, max: number) => (v === undefined ? undefined : wholeNumber(v, what, what === '--seed' ? 0 : 1, max));
  return readTakeChoice(values.only, number(values.seed, '--seed', 2_147_483_647), number(values.variations, '--variations', MAX_VARIATIONS));
}

export async function estimate(argv: string[], ctx: CliContext) {
  const { values, positionals } = parse(argv, { json: { type: 'boolean' }, 'new-take': { type: 'string', multiple: true }, ...TAKE_FLAGS }, 1);
  const name = projectArg(positionals, 'studio estimate PROJECT [--new-take SCENE [--only clip|image|both] [--seed N] [--variations N]]');
  await withPipeline(ctx, async (pipeline) => {
    const e = await pipeline.estimate(name, values['new-take'] ?? [], takeChoice(values));
    if (values.json) ctx.out(JSON.stringify({ ...e, project: e.project.name }, null, 2));
    else printEstimate(ctx, e, `buying it again needs "studio generate ${name} --rebuy-lost"`);
  });
}

export async function generate(argv: string[], ctx: CliContext) {
  const { positionals, values } = parse(argv, { 'new-take': { type: 'string', multiple: true }, ...TAKE_FLAGS, 'rebuy-lost': { type: 'boolean' }, 'confirm-unpriced': { type: 'boolean' } }, 1);
  const name = projectArg(positionals, 'studio generate PROJECT [--new-take SCENE [--only clip|image|both] [--seed N] [--variations N]] [--rebuy-lost] [--confirm-unpriced]');
  await withPipeline(ctx, async (pipeline) => {
    let e: GenerateEstimate;
    try {
      e = await pipeline.generate(name, { newTakes: values['new-take'] ?? [], take: takeChoice(values), rebuyLost: values['rebuy-lost'], confirmUnpriced: values['confirm-unpriced'] });
    } catch (err) {
      if (err instanceof UnpricedRefused) throw new UsageError(`${err.message.replace(/ Set a price.*$/, '')} Set a price in settings ("prices"), or run "studio generate ${name} --confirm-unpriced".`);
      if (!(err instanceof LostResultsRefused)) throw err;
      const paid = (s: StepEstimate) => `${s.key} (task ${s.lost!.taskId}, ${money(s.lost!.cost, s.lost!.currency)})`;
      // A lost file says where it was looked for, so the person can put it back rather than pay again.
      const lost = err.steps.filter((s) => s.lost!.savedOn === undefined).map((s) => `${paid(s)}${s.lost!.looked ? `, ${lookedFor(s.lost!.looked)}` : ''}`);
      const away = err.steps.filter((s) => s.lost!.savedOn !== undefined).map((s) => `${paid(s)}: ${s.lost!.why}`);
      const said = [...(lost.length ? [`result lost: ${lost.join('; ')}`] : []), ...(away.length ? [`result not on this machine: ${away.join('; ')}`] : [])];
      throw new UsageError(`paid for before, ${said.join('; ')}; nothing was enqueued. To buy again, run "studio generate ${name} --rebuy-lost".`);
    }
    printEstimate(ctx, e, 'bought again, as --rebuy-lost asked');
    const added = e.steps.filter((s) => s.action !== 'reuse' && s.action !== 'yours' && !s.sameAs).length;
    // The first take of a scene is picked; more (variations) wait beside it to be compared and picked.
    for (const [i, t] of e.takes.entries()) {
      const first = e.takes.findIndex((o) => o.scene === t.scene) === i;
      const already = t.already && ` already has ${t.already.image === t.already.clip ? `seed ${t.already.clip}` : `image seed ${t.already.image} and clip seed ${t.already.clip}`}:`;
      ctx.out(first ? `${t.scene}: take ${t.take}${already ?? ','} picked for the render ("studio takes ${name}" lists every take).` : `${t.scene}: take ${t.take}, to compare ("studio pick ${name} ${t.scene} ${t.take}" puts it in the render).`);
    }
    ctx.out(added ? `\nEnqueued ${added} step(s); run "studio worker" to make them.` : '\nNothing new to make: every step is already in the project.');
  });
}

/** Renders again, each scene from its picked take, even when an identical render exists; with --preset, an export. */
export async function render(argv: string[], ctx: CliContext) {
  const { positionals, values } = parse(argv, { preset: { type: 'string' } }, 1);
  const name = projectArg(positionals, 'studio render PROJECT [--preset 1080p|4k|vertical|square|webm|gif-preview]');
  let preset: Preset | undefined;
  try {
    preset = values.preset === undefined ? undefined : readPreset(values.preset as string);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  await withPipeline(ctx, async (pipeline) => {
    const done = await pipeline.render(name, preset);
    ctx.out(`render${preset ? ` (${preset})` : ''} enqueued as task ${done.steps.find((s) => s.kind === 'render')!.taskId}`);
  });
}

export async function budget(argv: string[], ctx: CliContext) {
  // A negative amount reads like a flag to the parser: said for what it is first.
  const negative = argv.find((a) => /^-\d/.test(a));
  if (negative !== undefined) amount(negative, 'a budget');
  const { positionals } = parse(argv, {}, 2);
  const [name, given] = positionals;
  if (!name || given === undefined) throw new UsageError('use: studio budget PROJECT AMOUNT (in the project currency), or AMOUNT "none"');
  const value = given === 'none' ? null : amount(given, 'a budget');
  const studio = await openStudio(ctx.dataDir, undefined, { existing: true, database: ctx.database, media: ctx.media });
  try {
    const project = await studio.projects.byName(name);
    if (!project) throw new UsageError(`there is no project "${name}"`);
    await studio.projects.setBudget(project.id, value === null ? null : toMicros(value));
    ctx.out(value === null ? `${name}: no budget` : `${name}: budget ${money(toMicros(value), project.currency)}`);
  } finally {
    await studio.close();
  }
}
