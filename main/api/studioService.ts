import { SettingsError, updateSettings } from '../config/settings.ts';
import { DecisionRefused, mayStillRunUntil, resolveUnknown } from '../engine/decisions.ts';
import { LookupFailed, reconcile } from '../engine/reconciler.ts';
import { GenerateRefused, Pipeline, type GenerateEstimate } from '../pipeline/generate.ts';
import { StoryboardError } from '../domain/storyboard.ts';
import { splitRevision, StaleStoryboard } from '../domain/storyboardRevision.ts';
import { parseStoryboard } from '../providers/storyboards.ts';
import { describeTakes, pickTake, takeAsJson, TakeRefused, type TakeSummary } from '../pipeline/takes.ts';
import { checkProjectName, MAX_BUDGET, ProjectRefused, type Project } from '../domain/project.ts';
import { isProviderId, PROVIDER_IDS, type Providers } from '../providers/registry.ts';
import { checkSettingsPatch, PatchRefused } from './settingsPatch.ts';
import { spendCsv, spendOverview, spendReport } from './spendViews.ts';
import { checkTeamChange, saveTeam, teamView } from './teamSettings.ts';
import { modelCatalogue } from './models.ts';
import { etaView, pendingDependencies, planLabels, scenePlan } from './scenePlan.ts';
import { learnDurations, type LearnedDurations } from '../engine/durations.ts';
import { etaWords, stepEta, type StepEta } from '../engine/eta.ts';
import { cancelAsked, recordJournaledRequests, type Studio } from '../studio.ts';
import { fromMicros, isKind, toMicros, type Task } from '../domain/tasks/model.ts';
import { isSimulated } from '../domain/simulated.ts';
import { RENDER_PROVIDER } from '../pipeline/planner.ts';
import { narrationWords } from '../pipeline/narrationLengths.ts';
import { rmSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import type {
  CancelPreview,
  LibraryItem,
  LibraryPage,
  LibraryQuery,
  OutputFileView,
  SpendOverview,
  TaskDetail,
  TaskRefView,
  CandidateView,
  DecisionInput,
  EngineStatus,
  EstimateView,
  GenerateOptions,
  KeySource,
  ModelCatalogueView,
  ProjectSummary,
  ScenePlanView,
  SettingsPatch,
  SettingsView,
  SpendReport,
  StudioApi,
  TakeView,
  TeamChange,
  TaskPage,
  TaskView,
  UnknownTask,
} from './contract.ts';

/** Estimates of when running tasks end, all judged at `now`. */
interface Etas {
  now: number;
  of(t: Task): StepEta | null;
}

/** Models' learned durations for one call: each provider and model read once, by `load`, before `get`. */
interface Durations {
  load(steps: Iterable<{ provider: string; model: string }>): Promise<void>;
  get(provider: string, model: string): LearnedDurations | null;
}

/** A refusal the person can act on; hosts pass its message to the UI as it is. */
export class ApiError extends Error {}

/** A save made from a revision older than the stored one (the loopback host answers 409): open it again, or save over it knowingly. */
export class ApiConflict extends ApiError {}

export interface KeyStore {
  /** Where a provider's key comes from, if it has one; 'unreadable': stored, but it cannot be decrypted here. */
  source(provider: string): KeySource;
  set(provider: string, value: string | null): void;
  encrypted: boolean;
}

export interface ServiceDeps {
  studio: Studio;
  providers: Providers;
  keys: KeyStore;
  /** How the UI reaches a task's output: `/media/ID` over loopback, `studio-media://task/ID` in the app. */
  mediaUrl: (taskId: number) => string;
  /** The engine's pause, if it is paused, as the supervisor of this process sees it. */
  paused: () => { reason: string; since: number } | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const money = (micros: number | null) => fromMicros(micros);

/** A CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180). */

function summary(t: Task): string {
  const input = t.input as Record<string, unknown>;
  if (t.kind === 'render') return `render of ${(input.scenes as unknown[] | undefined)?.length ?? 0} scene(s)`;
  return String(input.prompt ?? input.text ?? '').slice(0, 160);
}

/** Maps errors a person can act on into ApiError; anything else stays a bug. */
async function refusals<T>(fn: () => Promise<T> | T): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof StaleStoryboard) throw new ApiConflict(err.message);
    if (err instanceof GenerateRefused || err instanceof DecisionRefused || err instanceof StoryboardError || err instanceof TakeRefused) throw new ApiError(err.message);
    if (err instanceof SettingsError || err instanceof PatchRefused || err instanceof ProjectRefused) throw new ApiError(err.message);
    throw err;
  }
}

/** The StudioApi over one data folder, with the engine running in the same process. */
export class StudioService implements StudioApi {
  private readonly pipeline: Pipeline;

  constructor(private readonly deps: ServiceDeps) {
    this.pipeline = new Pipeline({ studio: deps.studio, provider: deps.providers.get, defaults: deps.studio.settings.defaults, prices: () => deps.studio.settings.prices });
  }

  private get studio() {
    return this.deps.studio;
  }

  private async project(name: string): Promise<Project> {
    const project = await this.studio.projects.byName(name);
    if (!project) throw new ApiError(`there is no project "${name}"`);
    return project;
  }

  /**
   * This call's learned durations: each provider and model is read once, however many rows share it. A render
   * is made here, so its time counts from its claim; a provider's, from the provider's acceptance.
   */
  private durations(): Durations {
    const memo = new Map<string, LearnedDurations | null>();
    const key = (provider: string, model: string) => `${provider}\u0000${model}`;
    const tasks = this.studio.tasks;
    return {
      load: async (steps) => {
        for (const { provider, model } of steps) {
          if (memo.has(key(provider, model))) continue;
          const samples = provider === RENDER_PROVIDER ? await tasks.recentRenderDurations(provider, model) : await tasks.recentDurations(provider, model);
          memo.set(key(provider, model), learnDurations(samples));
        }
      },
      get: (provider, model) => memo.get(key(provider, model)) ?? null,
    };
  }

  /**
   * How far each running task of `tasks` is likely to be from done. Reads nothing for tasks not running; for
   * those that are, one read per model and one for when the running renders were claimed.
   */
  private async etas(tasks: readonly Task[], learned = this.durations()): Promise<Etas> {
    const running = tasks.filter((t) => (t.status === 'SUBMITTED' && t.submittedAt !== null) || t.status === 'RUNNING');
    await learned.load(running);
    const renders = running.filter((t) => t.status === 'RUNNING' && t.provider === RENDER_PROVIDER).map((t) => t.id);
    const claimed = await this.studio.tasks.claimedAt(renders);
    const now = this.studio.clock.now();
    const of = (t: Task): StepEta | null => {
      if (t.status === 'SUBMITTED' && t.submittedAt !== null) return stepEta(learned.get(t.provider, t.model), now - t.submittedAt);
      if (t.status !== 'RUNNING') return null;
      if (t.provider !== RENDER_PROVIDER) return stepEta(learned.get(t.provider, t.model), 0); // still being sent
      const since = claimed.get(t.id);
      return since === undefined ? null : stepEta(learned.get(t.provider, t.model), now - since);
    };
    return { now, of };
  }

  /**
   * `labels`: what the tasks of the current plan make, to name what a waiting task waits for. `eta`: a page's
   * estimates read together (see etas); by default, this one task's.
   */
  async view(t: Task, labels: ReadonlyMap<number, string> = new Map(), eta?: Etas): Promise<TaskView> {
    const estimates = eta ?? (await this.etas([t]));
    const due = estimates.of(t);
    return {
      id: t.id,
      projectId: t.projectId,
      kind: t.kind,
      status: t.status,
      provider: t.provider,
      model: t.model,
      summary: summary(t),
      progress: t.progress,
      charged: t.charged,
      costEstimated: money(t.costEstimated),
      costEstimateSource: t.costEstimateSource,
      costActual: money(t.costActual),
      costActualSource: t.costActualSource,
      currency: t.currency,
      simulated: isSimulated(t.provider),
      outputUrl: t.outputPath && t.status === 'SUCCEEDED' ? this.deps.mediaUrl(t.id) : null,
      error: t.error,
      unknownReason: t.unknownReason,
      note: t.note,
      waitingFor: await pendingDependencies(t, (id) => this.studio.tasks.get(id), labels),
      outputs: t.status === 'SUCCEEDED' ? (await this.studio.tasks.outputs(t.id)).length : 0,
      remoteRequestId: t.remoteRequestId,
      submitStartedAt: iso(t.submitStartedAt),
      createdAt: iso(t.createdAt)!,
      finishedAt: iso(t.finishedAt),
      eta: due && etaView(due, estimates.now, etaWords(due)),
    };
  }

  async listProjects(): Promise<ProjectSummary[]> {
    const counts = await this.studio.tasks.counts();
    return (await this.studio.tasks.spend()).map((r) => ({
      id: r.projectId,
      name: r.project,
      currency: r.currency,
      budget: money(r.budget),
      spend: { actual: money(r.actual)!, estimated: money(r.estimated)!, possiblyCharged: money(r.possiblyCharged)! },
      counts: Object.fromEntries(counts.filter((c) => c.projectId === r.projectId).map((c) => [c.status, c.n])),
    }));
  }

  async createProject(name: string): Promise<ProjectSummary> {
    return refusals(async () => {
      const checked = checkProjectName(name);
      if (await this.studio.projects.byName(checked)) throw new ApiError(`there is already a project called "${checked}"`);
      const project = await this.studio.projects.ensure(name, this.studio.clock.now());
      return (await this.listProjects()).find((p) => p.id === project.id)!;
    });
  }

  async getStoryboard(project: string): Promise<unknown | null> {
    const id = (await this.project(project)).id;
    try {
      // The revision first: read with a newer board, a save made from it is refused, never let through.
      const revision = await this.studio.storyboards.revision(id);
      const board = await this.studio.storyboards.get(id);
      return board ? { ...board, revision } : null;
    } catch (err) {
      // Stored JSON is always JSON (a CHECK on the table); what an older version saved may fail today's checks.
      if (!(err instanceof StoryboardError)) throw err;
      throw new ApiError(`the saved storyboard of "${project}" no longer passes the checks (${err.message}); start a new one to replace it`);
    }
  }

  async storyboardRevision(project: string): Promise<number> {
    return this.studio.storyboards.revision((await this.project(project)).id);
  }

  async saveStoryboard(project: string, storyboard: unknown): Promise<number> {
    return refusals(async () => {
      const id = (await this.project(project)).id;
      const { from, board } = splitRevision(storyboard);
      try {
        return await this.studio.storyboards.save(id, parseStoryboard(board), this.studio.clock.now(), from);
      } catch (err) {
        // Said with the project's name, as the person knows it.
        if (err instanceof StaleStoryboard) throw new StaleStoryboard(project, err.from, err.current);
        throw err;
      }
    });
  }

  async setBudget(project: string, amount: number | null): Promise<void> {
    if (amount !== null && !(typeof amount === 'number' && Number.isFinite(amount) && amount >= 0 && amount <= MAX_BUDGET)) {
      throw new ApiError(`a budget is an amount from 0 to ${MAX_BUDGET}, or none`);
    }
    await this.studio.projects.setBudget((await this.project(project)).id, amount === null ? null : toMicros(amount));
  }

  private estimateView(e: GenerateEstimate): EstimateView {
    return {
      project: e.project.name,
      currency: e.project.currency,
      steps: e.steps.map((s) => ({ ...s, cost: money(s.cost), lost: s.lost && { ...s.lost, cost: money(s.lost.cost)! } })),
      total: money(e.total)!,
      simulatedTotal: money(e.simulatedTotal)!,
      missingKeys: e.missingKeys,
      unpriced: e.unpriced.length,
      spentUnpriced: e.spentUnpriced,
      balances: e.balances,
      spent: money(e.spent)!,
      budget: money(e.budget),
      overBy: money(e.overBy)!,
      narration: e.narration.map((n) => ({ scene: n.scene, predictedSec: n.predictedSec, sceneSec: n.sceneSec, cutSec: n.cutSec, text: narrationWords(n) })),
      shape: e.shape,
    };
  }

  async estimate(project: string, newTakes: string[] = []): Promise<EstimateView> {
    return refusals(async () => this.estimateView(await this.pipeline.estimate(project, newTakes)));
  }

  async generate(project: string, newTakes: string[] = [], options: GenerateOptions = {}): Promise<EstimateView> {
    return refusals(async () => this.estimateView(await this.pipeline.generate(project, { newTakes, rebuyLost: options?.rebuyLost === true, confirmUnpriced: options?.confirmUnpriced === true })));
  }

  async listTasks(project: string, offset: number, limit: number): Promise<TaskPage> {
    const safeOffset = Math.max(0, Math.floor(Number(offset) || 0));
    const p = await this.project(project);
    const page = await this.studio.tasks.page(p.id, safeOffset, Math.min(500, Math.max(1, Math.floor(Number(limit) || 50))));
    const labels = page.tasks.some((t) => t.status === 'PENDING') ? planLabels(await this.currentPlan(p)) : new Map<number, string>();
    const eta = await this.etas(page.tasks);
    const tasks: TaskView[] = [];
    for (const t of page.tasks) tasks.push(await this.view(t, labels, eta));
    return { total: page.total, offset: safeOffset, tasks };
  }

  async unknownTasks(): Promise<UnknownTask[]> {
    const names = new Map((await this.studio.projects.list()).map((p) => [p.id, p.name]));
    const unknown: UnknownTask[] = [];
    const now = this.studio.clock.now();
    for (const t of await this.studio.tasks.list({ status: 'OUTCOME_UNKNOWN' })) {
      const events = await this.studio.tasks.events(t.id);
      const provider = this.deps.providers.get(t.provider);
      // Judged as resolve judges a resubmit, so the time shown is the one a refusal would give.
      const running = await mayStillRunUntil(this.studio.tasks, t, now, { provider, queueMs: this.studio.settings.engine.lookup?.queueMs });
      const lookup = events.filter((e) => e.at >= (t.finishedAt ?? 0) && (e.detail as { lookup?: unknown } | null)?.lookup !== undefined).at(-1);
      unknown.push({
        ...(await this.view(t)),
        project: names.get(t.projectId)!,
        input: t.input,
        events: events.map((e) => ({ at: iso(e.at)!, from: e.fromStatus, to: e.toStatus, actor: e.actor, reason: e.reason })),
        lookupLists: provider?.capabilities.lookup ? (provider.capabilities.lookupLists ?? null) : null,
        lookup: lookup?.reason ?? null,
        mayRunUntil: running && { at: iso(running.at)!, why: running.why },
      });
    }
    return unknown;
  }

  async reconcile(taskId: number): Promise<CandidateView[]> {
    return refusals(async () => {
      await recordJournaledRequests(this.studio);
      const task = await this.studio.tasks.get(taskId);
      let found;
      try {
        found = await reconcile(this.studio.tasks, this.studio.files, task && this.deps.providers.get(task.provider), taskId, this.studio.clock.now(), this.studio.settings.engine.lookup?.queueMs);
      } catch (err) {
        if (err instanceof LookupFailed) throw new ApiError(`${err.message}; nothing was changed, try again later`);
        throw err;
      }
      const { candidates, listed, cut } = found;
      // An empty listing proves nothing yet: said as such, never as "never accepted", so nobody resubmits a running request.
      if (candidates.length === 0 && listed) throw new ApiError(`no request at ${task!.provider} matches yet, but it is not listed yet: ${listed.why}; look again after then`);
      if (candidates.length === 0 && cut) {
        throw new ApiError(`no request at ${task!.provider} matching it was among those read, but the listing could not be looked through whole: ${cut}; look for it in ${task!.provider}'s dashboard before deciding`);
      }
      return candidates.map((c) => ({ requestId: c.requestId, createdAt: iso(c.createdAt)!, status: c.status, why: c.why }));
    });
  }

  async resolve(taskId: number, decision: DecisionInput): Promise<TaskView> {
    return refusals(async () => {
      await recordJournaledRequests(this.studio);
      const task = await this.studio.tasks.get(taskId);
      const check = { provider: task && this.deps.providers.get(task.provider), queueMs: this.studio.settings.engine.lookup?.queueMs, flag: 'choose to resubmit even if it is running' };
      return this.view(await resolveUnknown(this.studio.tasks, taskId, decision, this.studio.clock.now(), check));
    });
  }

  async cancel(taskId: number): Promise<TaskView> {
    return refusals(async () => {
      const { task: cancelled } = await cancelAsked(this.studio, (p) => this.deps.providers.get(p), taskId);
      return this.view(cancelled);
    });
  }

  async spend(project: string): Promise<SpendReport> {
    return spendReport(this.studio.tasks, await this.project(project));
  }

  async spendCsv(project: string | null): Promise<string> {
    return spendCsv(this.studio.tasks, project === null ? null : await this.project(project));
  }

  async spendOverview(): Promise<SpendOverview> {
    return spendOverview(this.studio.tasks);
  }

  /** `deep`: each kept file's checksum is compared, not only its size. */
  private async files(t: Task, deep: boolean): Promise<OutputFileView[]> {
    const kept = t.status === 'SUCCEEDED' && t.outputPath !== null;
    const outputs = await this.studio.tasks.outputs(t.id);
    const views: OutputFileView[] = [];
    for (const o of outputs) {
      const found = kept ? await this.studio.files.check(o, outputs.length > 1 ? `file ${o.index + 1} of task ${t.id}` : `task ${t.id}'s result`, deep) : null;
      views.push({
        index: o.index,
        url: kept ? `${this.deps.mediaUrl(t.id)}/${o.index}` : null,
        contentType: o.contentType,
        bytes: o.bytes,
        machine: o.machine,
        problem: found && found.state !== 'here' ? found.words : null,
      });
    }
    return views;
  }

  private async deletedAt(t: Task): Promise<string | null> {
    if (t.status !== 'SUCCEEDED' || t.outputPath !== null) return null;
    const deleted = (await this.studio.tasks.events(t.id)).filter((e) => (e.detail as { deletedFiles?: unknown } | null)?.deletedFiles !== undefined).at(-1);
    return deleted ? iso(deleted.at) : null;
  }

  private async libraryItem(t: Task, project: string, scene: string | null, deep = false): Promise<LibraryItem> {
    return { ...(await this.view(t)), project, scene, input: t.input, files: await this.files(t, deep), deletedAt: await this.deletedAt(t) };
  }

  async library(query: LibraryQuery): Promise<LibraryPage> {
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
    const projects = await this.studio.projects.list();
    const projectId = q.project ? (await this.project(q.project)).id : null;
    const page = await this.studio.tasks.library(
      { projectId, kind: q.kind ?? null, provider: q.provider || null, from: instant(q.from, 'from'), to: instant(q.to, 'to'), search: q.search?.trim() || null },
      offset,
      limit,
    );
    const scenes = await this.studio.tasks.scenesOf(page.items.map((i) => i.task.id));
    const items: LibraryItem[] = [];
    for (const i of page.items) items.push(await this.libraryItem(i.task, i.project, scenes.get(i.task.id) ?? null));
    return {
      total: page.total,
      offset,
      items,
      projects: projects.map((p) => p.name),
      providers: await this.studio.tasks.libraryProviders(),
    };
  }

  private async named(id: number): Promise<{ task: Task; project: string }> {
    const task = await this.studio.tasks.get(id);
    if (!task) throw new ApiError(`there is no task ${id}`);
    return { task, project: (await this.studio.projects.list()).find((p) => p.id === task.projectId)!.name };
  }

  /**
   * The person deletes a saved result: the row forgets its files first (so nothing serves or reuses them),
   * then they are removed. What it cost stays counted: a provider refunds nothing for a deleted file.
   */
  async deleteOutput(taskId: number): Promise<LibraryItem> {
    const { task, project } = await this.named(taskId);
    if (task.status !== 'SUCCEEDED' || task.outputPath === null) throw new ApiError(`task ${taskId} has no saved result to delete`);
    const paths = (await this.studio.tasks.outputs(taskId)).map((o) => this.studio.media.resolve(o.path));
    const folders = [resolve(this.studio.dataDir) + sep, resolve(this.studio.media.base) + sep];
    // The studio removes only files it saved itself: in its own data folder, or its database's in the media folder.
    const own = paths.filter((p) => folders.some((f) => resolve(p).startsWith(f)));
    const paid = task.charged === 'no' ? 'it cost nothing' : `it cost ${fromMicros(task.costActual ?? task.costEstimated ?? 0)} ${task.currency} (${task.costActual !== null ? 'billed' : task.charged === 'yes' ? 'estimated' : 'possibly charged'}), not refunded`;
    const forgotten = await this.studio.tasks.forgetOutputs(taskId, `deleted by the person in the library; ${paid}`, own, this.studio.clock.now());
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
    return this.libraryItem(forgotten, project, (await this.studio.tasks.scenesOf([taskId])).get(taskId) ?? null);
  }

  private ref(t: Task): TaskRefView {
    return { id: t.id, kind: t.kind, status: t.status, summary: summary(t) };
  }

  async taskDetail(taskId: number): Promise<TaskDetail> {
    const { task, project } = await this.named(taskId);
    const related = await this.studio.tasks.related(taskId);
    return {
      ...(await this.libraryItem(task, project, (await this.studio.tasks.scenesOf([taskId])).get(taskId) ?? null, true)),
      events: (await this.studio.tasks.events(taskId)).map((e) => ({ at: iso(e.at)!, from: e.fromStatus, to: e.toStatus, actor: e.actor, reason: e.reason })),
      dependsOn: related.dependsOn.map((t) => this.ref(t)),
      dependents: related.dependents.map((t) => this.ref(t)),
    };
  }

  async cancelPreview(taskId: number): Promise<CancelPreview> {
    const { task } = await this.named(taskId);
    const dependents = (await this.studio.tasks.pendingDependents(taskId)).map((t) => this.ref(t));
    const mayCost = money(task.costActual ?? task.costEstimated);
    const about = mayCost === null ? 'its price is unknown' : `about ${mayCost.toFixed(2)} ${task.currency}`;
    const provider = this.deps.providers.get(task.provider);
    let message: string;
    const sent = task.submitStartedAt !== null && (task.status === 'RUNNING' || task.status === 'SUBMITTED');
    if (task.status !== 'PENDING' && task.status !== 'RUNNING' && task.status !== 'SUBMITTED') {
      message = `task ${taskId} is ${task.status.toLowerCase().replace('_', ' ')}; only unfinished work can be cancelled`;
    } else if (task.provider === RENDER_PROVIDER) {
      message = 'It is made on this machine; cancelling it costs nothing.';
    } else if (!sent) {
      message = `It has not been sent to ${task.provider}; nothing is charged for it.`;
    } else {
      const request = task.remoteRequestId ? ` as request ${task.remoteRequestId}` : '';
      // A request still being sent is asked to stop too, once the provider names it (see cancelLateRequest).
      const stop = provider?.cancel
        ? ` The studio asks ${task.provider} to stop it; if it is already running, it may still finish and be charged, and then its result is collected.`
        : ` The studio cannot ask ${task.provider} to stop it; what it makes is paid for, so its result is collected and kept.`;
      const where = task.status === 'RUNNING' && !task.remoteRequestId ? `It is being sent to ${task.provider}, so it may have been sent` : `It is already sent to ${task.provider}${request}`;
      message = `${where}; it may be charged (${about}).${stop}`;
    }
    return { taskId, sent, mayCost, currency: task.currency, message, dependents };
  }

  /** The storyboard's steps judged by the project's tasks now; null without a storyboard, or one that no longer passes the checks. */
  private async currentPlan(project: Project) {
    try {
      return await this.pipeline.current(project);
    } catch (err) {
      if (err instanceof StoryboardError) return null;
      throw err;
    }
  }

  async scenePlan(project: string): Promise<ScenePlanView> {
    const p = await this.project(project);
    const decided = await this.currentPlan(p);
    const learned = this.durations();
    // Every model of the plan: a step not started yet is timed by its model's past durations too.
    await learned.load(decided?.map((d) => d.step) ?? []);
    const eta = await this.etas(decided?.flatMap((d) => (d.verdict.action === 'reuse' ? [d.verdict.task] : [])) ?? [], learned);
    return scenePlan(decided, {
      projectId: p.id,
      withSameInput: (id, hash) => this.studio.tasks.withSameInput(id, hash),
      view: (t, labels) => this.view(t, labels, eta),
      eta: eta.of,
      learned: learned.get,
      now: eta.now,
    });
  }

  private takeView(t: TakeSummary): TakeView {
    const made = (kind: TakeSummary['steps'][number]['kind']) => {
      const task = t.steps.find((s) => s.kind === kind)?.task;
      return task?.status === 'SUCCEEDED' && task.outputPath ? this.deps.mediaUrl(task.id) : null;
    };
    return {
      ...takeAsJson(t),
      imageUrl: made('image'),
      clipUrl: made('clip'),
    };
  }

  async takes(project: string, scene?: string): Promise<TakeView[]> {
    if (scene !== undefined && (typeof scene !== 'string' || scene === '')) throw new ApiError('name the scene whose takes to list, or none for every scene');
    return (await describeTakes(this.studio, (await this.project(project)).id, scene)).map((t) => this.takeView(t));
  }

  async pickTake(project: string, scene: string, take: number): Promise<TakeView> {
    if (typeof scene !== 'string' || scene === '') throw new ApiError('name the scene whose take to pick');
    if (!Number.isInteger(take) || take < 1) throw new ApiError(`a take is a whole number from 1, not ${JSON.stringify(take)}`);
    return refusals(async () => this.takeView(await pickTake(this.studio, (await this.project(project)).name, scene, take)));
  }

  async listModels(): Promise<ModelCatalogueView> {
    return modelCatalogue({
      get: (id) => this.deps.providers.get(id),
      keySource: (id) => this.deps.keys.source(id),
      own: this.studio.settings.prices,
      defaults: this.studio.settings.defaults,
    });
  }

  async engineStatus(): Promise<EngineStatus> {
    const paused = this.deps.paused();
    return { paused: paused && { reason: paused.reason, since: iso(paused.since)! } };
  }

  async getSettings(): Promise<SettingsView> {
    const s = this.studio.settings;
    return {
      concurrency: s.engine.concurrency,
      leaseMs: s.engine.leaseMs,
      pollDeadlineMs: s.engine.poll.deadlineMs,
      ffmpegPath: s.media.ffmpegPath ?? null,
      keys: Object.fromEntries(PROVIDER_IDS.filter((id) => id !== 'simulator').map((id) => [id, this.deps.keys.source(id)])),
      keysEncrypted: this.deps.keys.encrypted,
      confirmAbove: s.ui.confirmAbove,
      keepAwake: s.ui.keepAwake,
      team: teamView(this.studio),
    };
  }

  /** Saves the team database and the machine name; the studio uses them from its next start. */
  async saveTeam(change: TeamChange): Promise<SettingsView> {
    return refusals(async () => {
      saveTeam(this.studio, checkTeamChange(change));
      return this.getSettings();
    });
  }

  /** Saves settings; engine values take effect at the next start, a key at once. */
  async saveSettings(patch: SettingsPatch): Promise<SettingsView> {
    return refusals(async () => {
      // The program the studio runs is the person's choice on this machine (the settings file, the CLI, the
      // desktop app's own file dialog), never something a page or the loopback host can set.
      if (patch && typeof patch === 'object' && ('ffmpegPath' in patch || 'ffprobePath' in patch)) {
        throw new ApiError('the ffmpeg program is chosen in settings.json (media.ffmpegPath) on this machine, not through the studio\'s API');
      }
      checkSettingsPatch(patch);
      if (patch.key) {
        if (!isProviderId(patch.key.provider) || patch.key.provider === 'simulator') throw new ApiError(`there is no provider "${patch.key.provider}" that takes a key`);
        this.deps.keys.set(patch.key.provider, patch.key.value);
      }
      this.studio.settings = updateSettings(this.studio.dataDir, (raw) => {
        raw.engine ??= {};
        if (patch.concurrency) raw.engine.concurrency = { ...raw.engine.concurrency, ...patch.concurrency };
        if (patch.leaseMs !== undefined) raw.engine.leaseMs = patch.leaseMs;
        if (patch.pollDeadlineMs !== undefined) raw.engine.poll = { ...raw.engine.poll, deadlineMs: patch.pollDeadlineMs };
        raw.ui ??= {};
        if (patch.confirmAbove !== undefined) raw.ui.confirmAbove = patch.confirmAbove;
        if (patch.keepAwake !== undefined) raw.ui.keepAwake = patch.keepAwake;
      });
      if (patch.key) await this.deps.providers.reload(this.studio.settings);
      return this.getSettings();
    });
  }
}
