import { estimateCost, type OwnPrices } from '../engine/estimator.ts';
import { lookedFor } from '../media/outputWords.ts';
import { movedWords, ProjectMoved } from '../domain/projectMoved.ts';
import type { Project } from '../domain/project.ts';
import { type PreparedRequest } from '../providers/port.ts';
import { InvalidInput, MissingKey } from '../providers/invalidInput.ts';
import { prepareWithoutKey, titleOf } from '../providers/registry.ts';
import { isSimulated } from '../domain/simulated.ts';
import { distinctKeys, missingKeyNote, missingKeysWords, type MissingKeyNote } from './missingKeys.ts';
import type { Stores } from '../store/port.ts';
import type { Studio } from '../studio.ts';
import { inputHash } from '../domain/tasks/inputHash.ts';
import type { Task } from '../domain/tasks/model.ts';
import { bindStepRefs, inputOrigin, planRender, planScenes, RENDER_PROVIDER, sceneSeed, stepRefsAs, type PlannedStep } from './planner.ts';
import { decidePlan, judgeStep, type Decided, type Verdict } from './reuse.ts';
import { sceneById, type StepChoice, type StepKind, type Storyboard } from '../domain/storyboard.ts';
import type { TakeRecord } from '../domain/takeRecord.ts';
import { resultPlaces } from './resultPlaces.ts';
import { narrationNotes, type NarrationNote } from './narrationLengths.ts';
import { shapeNotes } from './shapeNotes.ts';
import { keptTakes, pickedTakes, recordTakes, renderSources, TakeRefused } from './takes.ts';
import { ownStills, OwnImageRefused, type OwnStill } from './ownImages.ts';

/** An earlier purchase of a step whose result is lost, or kept only by another machine. */
export interface LostResult {
  taskId: number;
  /** Whether that purchase was certainly charged, or possibly. */
  paid: 'yes' | 'maybe';
  /** What it cost (billed, else estimated), in micro-units of `currency`. */
  cost: number;
  currency: string;
  /** How the result was lost, or which machine has it and what to do. */
  why: string;
  /** The machine that keeps the result, when another machine does: then it is not lost, only not here. */
  savedOn?: string;
  /** Each place a lost result's file was looked for on this machine. */
  looked?: string[];
}

export interface StepEstimate {
  key: string;
  scene: string | null;
  kind: PlannedStep['kind'];
  provider: string;
  model: string;
  /**
   * reuse: an identical step already in the project stands in for it, at no cost. rebuy: it was paid for
   * and its result is lost, or not on this machine; it is bought again only when the person confirms it.
   * yours: the scene's image is the creator's own still; nothing is bought for it.
   */
  action: 'new' | 'reuse' | 'rebuy' | 'yours';
  taskId: number | null;
  /** Micro-units of `currency`; 0 for reused and local steps; null when no price is known (never counted as 0). */
  cost: number | null;
  currency: string;
  source: string;
  /** For a rebuy: the purchase whose result was lost. */
  lost: LostResult | null;
  /** The simulator's made-up price: never charged, and counted in `simulatedTotal` as well as `total`. */
  simulated: boolean;
  /** A new step whose provider has no key yet: priced all the same, and Generate asks for the key. */
  keyMissing: MissingKeyNote | null;
}

export interface GenerateEstimate {
  project: Project;
  steps: StepEstimate[];
  /** What the new steps of known price may cost. */
  total: number;
  /** The part of `total` that is the simulator's made-up money, never charged. */
  simulatedTotal: number;
  /** Providers the new steps need with no key yet; Generate is refused until they are added. */
  missingKeys: MissingKeyNote[];
  /** New steps whose price is unknown, left out of `total`; a budgeted project refuses them unless confirmed. */
  unpriced: StepEstimate[];
  /** What the project has spent, may have spent, or has enqueued and not sent yet. */
  spent: number;
  /** Earlier steps of the project, spent or enqueued, whose price is unknown: not in `spent`. */
  spentUnpriced: number;
  budget: number | null;
  /** How far past the budget this Generate would go, or 0. */
  overBy: number;
  /** Per provider of the new steps: what its account has left, where it tells an API key, or that it does not. */
  balances: BalanceNote[];
  /** Each narrated scene's predicted narration length, the scene's length beside it, and what would be cut. */
  narration: NarrationNote[];
  /** Each model to be used that cannot make the project's exact shape, and the nearest it makes. */
  shape: string[];
  /** The takes this Generate added, one per scene it made anew; each is now the one its scene renders. */
  takes: { scene: string; take: number }[];
}

export interface BalanceNote {
  provider: string;
  text: string;
  /** This Generate would pass the account's limit for the period. */
  over: boolean;
}

const ALLOWANCE_TIMEOUT_MS = 5_000;

export class GenerateRefused extends Error {}

/** A Generate whose new steps need keys that are not set: the price is known, the purchase waits for the keys. */
export class MissingKeysRefused extends GenerateRefused {
  constructor(readonly keys: MissingKeyNote[]) {
    super(`no API key yet for ${missingKeysWords(keys)}; add ${keys.length === 1 ? 'it' : 'them'} and generate again. Nothing was enqueued.`);
  }
}

const money = (micros: number, currency: string) => `${(micros / 1e6).toFixed(2)} ${currency}`;

/**
 * "paid, result lost" (or "possibly paid", or "result not on this machine" when another machine keeps it), with
 * the earlier task, its cost and how the result was lost or where it is.
 */
export function describeLost(lost: LostResult): string {
  const result = lost.savedOn === undefined ? 'result lost' : 'result not on this machine';
  const looked = lost.looked ? `, ${lookedFor(lost.looked)}` : '';
  return `${lost.paid === 'yes' ? 'paid' : 'possibly paid'}, ${result}: task ${lost.taskId} cost ${money(lost.cost, lost.currency)} (${lost.why})${looked}`;
}

/** A Generate that would buy again a step whose paid result was lost, without the person saying so. */
export class LostResultsRefused extends GenerateRefused {
  constructor(readonly steps: StepEstimate[]) {
    super(
      `${steps.map((s) => `${s.key} was ${describeLost(s.lost!)}`).join('; ')}. ` +
        `Buying ${steps.length === 1 ? 'it' : 'them'} again needs your confirmation; nothing was enqueued.`,
    );
  }
}

export interface PipelineDeps {
  studio: Studio;
  /** Adapters, used only to validate inputs and ask for quotes; nothing is sent from here. */
  provider: (id: string) => import('../providers/port.ts').ProviderAdapter | undefined;
  defaults: Record<StepKind, StepChoice>;
  /** Prices the person set for models with no documented one, per request (settings "prices"). */
  prices?: () => OwnPrices;
}


export interface GenerateOptions {
  newTakes?: string[];
  /** Render again even when an identical render exists. */
  freshRender?: boolean;
  /** The person confirmed buying again the steps whose paid result was lost. */
  rebuyLost?: boolean;
  /** The person confirmed, for a budgeted project, the steps whose price is unknown. */
  confirmUnpriced?: boolean;
  /** Only a render, of each scene's picked take; a scene with no take yet is made from the storyboard, if all of it exists. */
  renderOnly?: boolean;
}

/** A budgeted Generate with steps of unknown price, which a budget cannot be checked against. */
export class UnpricedRefused extends GenerateRefused {
  constructor(readonly steps: StepEstimate[]) {
    const models = [...new Set(steps.map((s) => `${s.provider} ${s.model}`))].join(', ');
    super(
      `${steps.length} step${steps.length === 1 ? ' has' : 's have'} no known price (${models}), so this project's budget cannot be checked for ` +
        `${steps.length === 1 ? 'it' : 'them'}; nothing was enqueued. Set a price for the model in settings ("prices"), or confirm to go ahead without one.`,
    );
  }
}

type Price = Pick<StepEstimate, 'cost' | 'currency' | 'source'>;

/** A new step's request as its adapter builds it; `keyMissing` when it was built without the provider's key. */
interface Checked {
  request: PreparedRequest | 'local';
  keyMissing: MissingKeyNote | null;
}

function lostResult({ lost: task, why, savedOn, looked }: Extract<Verdict, { action: 'rebuy' }>): LostResult {
  const lost: LostResult = { taskId: task.id, paid: task.charged === 'yes' ? 'yes' : 'maybe', cost: task.costActual ?? task.costEstimated ?? 0, currency: task.currency, why };
  return { ...lost, ...(savedOn === undefined ? {} : { savedOn }), ...(looked === undefined ? {} : { looked }) };
}

function stepEstimate(step: PlannedStep, verdict: Verdict, price: Price, keyMissing: MissingKeyNote | null = null): StepEstimate {
  return {
    key: step.key,
    scene: step.scene,
    kind: step.kind,
    provider: step.provider,
    model: step.model,
    action: verdict.action,
    taskId: verdict.action === 'reuse' ? verdict.task.id : null,
    ...price,
    lost: verdict.action === 'rebuy' ? lostResult(verdict) : null,
    simulated: isSimulated(step.provider),
    keyMissing,
  };
}

/** The estimate's row for a scene's own still: nothing is bought. */
function yoursEstimate(scene: string, still: OwnStill, currency: string): StepEstimate {
  return {
    key: `${scene}:image`,
    scene,
    kind: 'image',
    provider: 'yours',
    model: '$output' in still.ref ? `task ${still.ref.$output}` : 'file',
    action: 'yours',
    taskId: '$output' in still.ref ? still.ref.$output : null,
    cost: 0,
    currency,
    source: still.words,
    lost: null,
    simulated: false,
    keyMissing: null,
  };
}

function reusedPrice(task: Task, why: string | undefined, currency: string): Price {
  return { cost: 0, currency, source: `reused: task ${task.id} ${why ? `is kept; ${why}` : 'already has this exact step'}` };
}

/**
 * Turns a project's storyboard into tasks. Each step is reused when an identical one (same provider, model
 * and input, seed included) is already in the project; only new steps are estimated, checked against the
 * budget and enqueued. Editing one scene therefore regenerates that scene's steps and the render only.
 * A step paid for before whose result was lost is never bought again unless the person confirms it.
 */
export class Pipeline {
  constructor(private readonly deps: PipelineDeps) {}

  private async storyboardOf(projectName: string): Promise<{ project: Project; board: Storyboard }> {
    const { studio } = this.deps;
    const project = await studio.projects.byName(projectName);
    if (!project) throw new GenerateRefused(`there is no project "${projectName}"`);
    if (project.moved) throw new ProjectMoved(movedWords(project.moved));
    const board = await studio.storyboards.get(project.id);
    if (!board) throw new GenerateRefused(`project "${projectName}" has no storyboard yet; create one with "studio storyboard create"`);
    return { project, board };
  }

  /**
   * Judges every step of the plan by the tasks the project has now; reads only, with no network. The render
   * uses each scene's picked take: a render alone plans no scene that has one, and a Generate renders what it
   * makes anew (a new take, picked) and, for a scene it makes nothing new for, the picked take as it is.
   * `stores`: read from, the studio's or a transaction's.
   */
  private async decide(project: Project, board: Storyboard, options: GenerateOptions, stores: Stores, own: ReadonlyMap<string, OwnStill>): Promise<Decided[]> {
    const judge = async (step: PlannedStep, input: unknown): Promise<Verdict> => {
      if (options.freshRender && step.kind === 'render') return { action: 'new' };
      const earlier = await stores.tasks.withSameInput(project.id, inputHash(step.provider, step.model, input));
      const places = await resultPlaces(stores.tasks, this.deps.studio.media, earlier);
      return judgeStep(earlier, (t) => places.get(t.id)!, step.provider !== RENDER_PROVIDER);
    };
    const picked = await pickedTakes(stores, project.id);
    const alone = new Map(options.renderOnly ? [...picked].filter(([scene]) => board.scenes.some((s) => s.id === scene)) : []);
    const mine = new Map([...own].map(([scene, still]) => [scene, still.ref]));
    const decided = await decidePlan([...planScenes(board, this.deps.defaults, new Set(alone.keys()), mine), planRender(board, await this.sources(stores, alone))], judge);
    const kept = options.renderOnly ? new Map<string, TakeRecord>() : await keptTakes(stores, project.id, board, decided, picked);
    if (kept.size === 0) return decided;
    const render = planRender(board, await this.sources(stores, kept));
    const ids = new Map(decided.flatMap(({ step, verdict }) => (verdict.action === 'reuse' ? [[step.key, verdict.task.id] as const] : [])));
    const input = bindStepRefs(render.input, ids);
    return [...decided.slice(0, -1), { step: render, verdict: input === undefined ? { action: 'new' } : await judge(render, input) }];
  }

  /** What the render takes from each picked take; one whose result is gone is refused, saying which. */
  private async sources(stores: Stores, takes: ReadonlyMap<string, TakeRecord>) {
    try {
      return await renderSources({ ...stores, media: this.deps.studio.media }, takes);
    } catch (err) {
      if (err instanceof TakeRefused) throw new GenerateRefused(err.message);
      throw err;
    }
  }

  private async summed(project: Project, steps: StepEstimate[], stores: Stores): Promise<GenerateEstimate> {
    const bought = steps.filter((s) => s.action !== 'reuse' && s.action !== 'yours');
    const total = bought.reduce((sum, s) => sum + (s.cost ?? 0), 0);
    const simulatedTotal = bought.filter((s) => s.simulated).reduce((sum, s) => sum + (s.cost ?? 0), 0);
    const unpriced = bought.filter((s) => s.cost === null);
    const spend = (await stores.tasks.spend(project.id))[0]!;
    const spent = spend.actual + spend.estimated + spend.possiblyCharged + spend.queued;
    const overBy = project.budget === null ? 0 : Math.max(0, spent + total - project.budget);
    const missingKeys = distinctKeys(bought.map((s) => s.keyMissing));
    return { project, steps, total, simulatedTotal, missingKeys, unpriced, spent, spentUnpriced: spend.unpriced, budget: project.budget, overBy, balances: [], takes: [], narration: [], shape: [] };
  }

  /** Prices every step that is not reused (a network call for some providers). */
  private async walk(project: Project, board: Storyboard, options: GenerateOptions, own: ReadonlyMap<string, OwnStill>): Promise<GenerateEstimate> {
    const steps: StepEstimate[] = [];
    const requests = new Map<string, PreparedRequest[]>();
    const decided = await this.decide(project, board, options, this.deps.studio, own);
    // Every new step is checked before any provider is asked for a quote: a refused Generate sends nothing.
    const checked = decided.map(({ step, verdict }) => (verdict.action === 'reuse' ? null : this.check(step, board)));
    for (const [i, { step, verdict }] of decided.entries()) {
      const still = step.kind === 'clip' && step.scene !== null ? own.get(step.scene) : undefined;
      if (still) steps.push(yoursEstimate(step.scene!, still, project.currency));
      if (verdict.action === 'reuse') {
        steps.push(stepEstimate(step, verdict, reusedPrice(verdict.task, verdict.why, project.currency)));
        continue;
      }
      const { request, keyMissing } = checked[i]!;
      steps.push(stepEstimate(step, verdict, await this.price(step, request, keyMissing === null), keyMissing));
      if (request !== 'local' && keyMissing === null) requests.set(step.provider, [...(requests.get(step.provider) ?? []), request]);
    }
    const narration = narrationNotes(board, this.deps.defaults);
    const shape = shapeNotes(steps.filter((s) => s.action !== 'yours'), board);
    return { ...(await this.summed(project, steps, this.deps.studio)), balances: await this.balances(requests), narration, shape };
  }

  /** Asks each provider of the new steps what its account has left, where it tells an API key. */
  private async balances(requests: Map<string, PreparedRequest[]>): Promise<BalanceNote[]> {
    const notes: BalanceNote[] = [];
    for (const [provider, sent] of requests) {
      const adapter = this.deps.provider(provider)!;
      if (!adapter.allowance) {
        if (provider !== 'simulator') notes.push({ provider, text: `${titleOf(provider)} tells an API key nothing of its balance; check it on its own site`, over: false });
        continue;
      }
      try {
        const a = await adapter.allowance(sent, AbortSignal.timeout(ALLOWANCE_TIMEOUT_MS));
        const over = a.used + a.needed > a.limit;
        const resets = a.resetsAt === null ? '' : `, counted afresh on ${new Date(a.resetsAt).toISOString().slice(0, 10)}`;
        notes.push({
          provider,
          text: `${a.used} of ${a.limit} ${a.unit} used this period${resets}; these steps need about ${a.needed}${over ? `, ${a.used + a.needed - a.limit} more than is left` : ''}`,
          over,
        });
      } catch (err) {
        notes.push({ provider, text: `${titleOf(provider)} could not be asked what the account has left (${(err as Error).message})`, over: false });
      }
    }
    return notes;
  }

  /**
   * Builds a step's request as its adapter will, which checks its input. An input the provider would refuse is
   * refused here, before anything is asked of the provider or saved, naming the field, its limit and where in
   * the storyboard (or settings) it was written. 'local' for a step made on this machine.
   */
  private check(step: PlannedStep, board: Storyboard): Checked {
    if (step.provider === RENDER_PROVIDER) return { request: 'local', keyMissing: null };
    const adapter = this.deps.provider(step.provider);
    if (!adapter) throw new GenerateRefused(`step ${step.key}: there is no provider "${step.provider}"`);
    // The step's inputs from other steps do not exist yet; a stand-in lets the rest be checked.
    const task = { kind: step.kind, model: step.model, input: stepRefsAs(step.input, 'data:image/png;base64,') };
    try {
      try {
        return { request: adapter.prepare(task), keyMissing: null };
      } catch (err) {
        // No key yet is no reason not to price it: the request is built (and its input checked) as it will be sent.
        if (!(err instanceof MissingKey)) throw err;
        return { request: prepareWithoutKey(step.provider, task), keyMissing: missingKeyNote(step.provider, err) };
      }
    } catch (err) {
      if (!(err instanceof InvalidInput)) throw err;
      const origin = err.field === undefined ? null : inputOrigin(board, this.deps.defaults, step, err.field);
      throw new GenerateRefused(`step ${step.key} (${step.provider} ${step.model}): ${err.message}${origin ? `; change ${origin}` : ''}. Nothing was enqueued.`);
    }
  }

  /** A checked step's price: the provider's quote (only with a key to ask with), else the catalogue. */
  private async price(step: PlannedStep, request: PreparedRequest | 'local', canQuote: boolean): Promise<Price> {
    if (request === 'local') return { cost: 0, currency: 'USD', source: 'made on this machine: no charge' };
    const estimate = await estimateCost(this.deps.provider(step.provider)!, request, this.deps.prices?.(), canQuote);
    return estimate ?? { cost: null, currency: 'USD', source: `price unknown: no documented price for ${step.provider} ${step.model}; set one in settings ("prices")` };
  }

  /** The storyboard's steps, each judged by the tasks the project has now, as a Generate would; reads only, no network. */
  async current(project: Project): Promise<Decided[] | null> {
    const board = await this.deps.studio.storyboards.get(project.id);
    return board ? this.decide(project, board, {}, this.deps.studio, (await this.own(project, board, false)).stills) : null;
  }

  /** Each scene's own still (see ownImages.ts); with `copy`, a file is copied into the project. */
  private async own(project: Project, board: Storyboard, copy: boolean) {
    const { studio } = this.deps;
    try {
      return await ownStills(project, board, { media: studio.media, task: (id) => studio.tasks.get(id) }, copy);
    } catch (err) {
      if (err instanceof OwnImageRefused) throw new GenerateRefused(`${err.message}. Nothing was enqueued.`);
      throw err;
    }
  }

  /** What a Generate would do and cost, step by step, without doing it. */
  async estimate(projectName: string, newTakes: string[] = []): Promise<GenerateEstimate> {
    const { project, board: saved } = await this.storyboardOf(projectName);
    const { stills, board } = await this.own(project, await this.withNewTakes(project, saved, newTakes), false);
    return this.walk(project, board, {}, stills);
  }

  /** A new take's number varies the seed: past every take the scene has had, so nothing of them is reused. */
  private async withNewTakes(project: Project, board: Storyboard, scenes: string[]): Promise<Storyboard> {
    if (scenes.length === 0) return board;
    for (const id of scenes) sceneById(board, id);
    const takes = await this.deps.studio.takes.list(project.id);
    const next = (scene: string, take: number) => Math.max(take, ...takes.filter((t) => t.scene === scene).map((t) => t.variant)) + 1;
    return { ...board, scenes: board.scenes.map((s) => (scenes.includes(s.id) ? { ...s, take: next(s.id, s.take) } : s)) };
  }

  /**
   * Renders each scene's picked take again, even when an identical render exists; buys nothing. A scene with no
   * take yet is rendered from the storyboard only if all of its steps are made.
   */
  async render(projectName: string): Promise<GenerateEstimate> {
    const { project, board } = await this.storyboardOf(projectName);
    const options: GenerateOptions = { freshRender: true, renderOnly: true };
    const { stills } = await this.own(project, board, false);
    const missing = (await this.decide(project, board, options, this.deps.studio, stills)).filter((d) => d.step.kind !== 'render' && d.verdict.action !== 'reuse');
    if (missing.length > 0) throw new GenerateRefused(`${missing.map((d) => d.step.key).join(', ')} not made yet: generate them first`);
    return this.generate(projectName, options);
  }

  /**
   * Enqueues the new steps of the storyboard, refusing (with the amount) a Generate that would take the project
   * past its budget, and one that would buy a lost result again unless `rebuyLost` confirms it. A new take of a
   * scene is kept in its storyboard, so the next Generate reuses it.
   */
  async generate(projectName: string, options: GenerateOptions = {}): Promise<GenerateEstimate> {
    const { studio } = this.deps;
    const { project: named, board: saved } = await this.storyboardOf(projectName);
    // A file is copied into the project before anything is judged: the clip is made from the copy, not the original.
    const { stills, board } = await this.own(named, await this.withNewTakes(named, saved, options.newTakes ?? []), true);
    const priced = await this.walk(named, board, options, stills);
    const now = studio.clock.now();
    // Pricing awaited the network, so another Generate (in this process or another, on this machine or another)
    // may have enqueued the same steps, or spent the budget, meanwhile. Holding the project, then judging every
    // step again, checking the budget and enqueueing in one write transaction means two Generates of a project
    // go one after the other: the second reuses what the first enqueued, and is judged against what it spent.
    return studio.store.transaction(async (tx) => {
      const project = await tx.projects.lock(named.id);
      if (!project) throw new GenerateRefused(`there is no project "${projectName}"`);
      if (project.moved) throw new ProjectMoved(movedWords(project.moved));
      const decided = await this.decide(project, board, options, tx, stills);
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
        return stepEstimate(step, verdict, { cost: before.cost, currency: before.currency, source: before.source }, before.keyMissing);
      });
      const estimate = { ...(await this.summed(project, [...mineRows, ...steps], tx)), balances: priced.balances, narration: priced.narration, shape: priced.shape };
      if (estimate.missingKeys.length > 0) throw new MissingKeysRefused(estimate.missingKeys);
      const lost = steps.filter((s) => s.action === 'rebuy');
      if (lost.length > 0 && !options.rebuyLost) throw new LostResultsRefused(lost);
      if (project.budget !== null && estimate.unpriced.length > 0 && !options.confirmUnpriced) throw new UnpricedRefused(estimate.unpriced);
      if (estimate.overBy > 0) {
        throw new GenerateRefused(
          `this Generate would cost about ${money(estimate.total, project.currency)}; with ${money(estimate.spent, project.currency)} ` +
            `already spent, possibly charged or enqueued, that is ${money(estimate.overBy, project.currency)} over the budget of ` +
            `${money(project.budget!, project.currency)}. Raise the budget or change the storyboard; nothing was enqueued.`,
        );
      }
      if (board !== saved) await tx.storyboards.save(project.id, board, now);
      // A library image stands as its scene's image task, so the take made from it names it.
      const ids = new Map<string, number>([...stills].flatMap(([scene, still]) => ('$output' in still.ref ? [[`${scene}:image`, still.ref.$output] as const] : [])));
      for (const [i, { step, verdict }] of decided.entries()) {
        if (verdict.action === 'reuse') {
          ids.set(step.key, verdict.task.id);
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
            dependsOn: [...step.dependsOn.map((k) => ids.get(k)!), ...(step.dependsOnTasks ?? [])],
            estimate: { cost: steps[i]!.cost, source: steps[i]!.source, currency: steps[i]!.currency },
          },
          now,
        );
        ids.set(step.key, task.id);
        steps[i]!.taskId = task.id;
      }
      const seeds = new Map(board.scenes.map((s) => [s.id, sceneSeed(s)]));
      estimate.takes = (await recordTakes(tx, project.id, board, seeds, ids, now)).map((t) => ({ scene: t.scene, take: t.take }));
      return estimate;
    });
  }
}
