import { SettingsError, updateSettings } from '../config/settings.ts';
import { cancelTask, DecisionRefused, resolveUnknown } from '../engine/decisions.ts';
import { reconcile } from '../engine/reconciler.ts';
import { GenerateRefused, Pipeline, type GenerateEstimate } from '../pipeline/generate.ts';
import { parseStoryboard, StoryboardError } from '../pipeline/storyboard.ts';
import { checkProjectName, MAX_BUDGET, ProjectRefused } from '../projects/repository.ts';
import { isProviderId, PROVIDER_IDS, type Providers } from '../providers/registry.ts';
import { checkSettingsPatch, PatchRefused } from './settingsPatch.ts';
import { recordJournaledRequests, type Studio } from '../studio.ts';
import { fromMicros, toMicros, type Task } from '../tasks/model.ts';
import type {
  CandidateView,
  DecisionInput,
  EngineStatus,
  EstimateView,
  GenerateOptions,
  KeySource,
  ProjectSummary,
  SettingsPatch,
  SettingsView,
  SpendReport,
  StudioApi,
  TaskPage,
  TaskView,
  UnknownTask,
} from './contract.ts';

/** A refusal the person can act on; hosts pass its message to the UI as it is. */
export class ApiError extends Error {}

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
    if (err instanceof GenerateRefused || err instanceof DecisionRefused || err instanceof StoryboardError) throw new ApiError(err.message);
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

  private project(name: string) {
    const project = this.studio.projects.byName(name);
    if (!project) throw new ApiError(`there is no project "${name}"`);
    return project;
  }

  view(t: Task): TaskView {
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
      outputUrl: t.outputPath && t.status === 'SUCCEEDED' ? this.deps.mediaUrl(t.id) : null,
      error: t.error,
      unknownReason: t.unknownReason,
      note: t.note,
      outputs: t.status === 'SUCCEEDED' ? this.studio.tasks.outputs(t.id).length : 0,
      remoteRequestId: t.remoteRequestId,
      submitStartedAt: iso(t.submitStartedAt),
      createdAt: iso(t.createdAt)!,
      finishedAt: iso(t.finishedAt),
    };
  }

  async listProjects(): Promise<ProjectSummary[]> {
    const counts = this.studio.tasks.counts();
    return this.studio.tasks.spend().map((r) => ({
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
      if (this.studio.projects.byName(checked)) throw new ApiError(`there is already a project called "${checked}"`);
      const project = this.studio.projects.ensure(name, this.studio.clock.now());
      return (await this.listProjects()).find((p) => p.id === project.id)!;
    });
  }

  async getStoryboard(project: string): Promise<unknown | null> {
    const id = this.project(project).id;
    try {
      return this.studio.storyboards.get(id) ?? null;
    } catch (err) {
      // Stored JSON is always JSON (a CHECK on the table); what an older version saved may fail today's checks.
      if (!(err instanceof StoryboardError)) throw err;
      throw new ApiError(`the saved storyboard of "${project}" no longer passes the checks (${err.message}); start a new one to replace it`);
    }
  }

  async saveStoryboard(project: string, storyboard: unknown): Promise<void> {
    return refusals(() => this.studio.storyboards.save(this.project(project).id, parseStoryboard(storyboard), this.studio.clock.now()));
  }

  async setBudget(project: string, amount: number | null): Promise<void> {
    if (amount !== null && !(typeof amount === 'number' && Number.isFinite(amount) && amount >= 0 && amount <= MAX_BUDGET)) {
      throw new ApiError(`a budget is an amount from 0 to ${MAX_BUDGET}, or none`);
    }
    this.studio.projects.setBudget(this.project(project).id, amount === null ? null : toMicros(amount));
  }

  private estimateView(e: GenerateEstimate): EstimateView {
    return {
      project: e.project.name,
      currency: e.project.currency,
      steps: e.steps.map((s) => ({ ...s, cost: money(s.cost), lost: s.lost && { ...s.lost, cost: money(s.lost.cost)! } })),
      total: money(e.total)!,
      unpriced: e.unpriced.length,
      spentUnpriced: e.spentUnpriced,
      balances: e.balances,
      spent: money(e.spent)!,
      budget: money(e.budget),
      overBy: money(e.overBy)!,
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
    const page = this.studio.tasks.page(this.project(project).id, safeOffset, Math.min(500, Math.max(1, Math.floor(Number(limit) || 50))));
    return { total: page.total, offset: safeOffset, tasks: page.tasks.map((t) => this.view(t)) };
  }

  async unknownTasks(): Promise<UnknownTask[]> {
    const names = new Map(this.studio.projects.list().map((p) => [p.id, p.name]));
    return this.studio.tasks.list({ status: 'OUTCOME_UNKNOWN' }).map((t) => {
      const events = this.studio.tasks.events(t.id);
      const provider = this.deps.providers.get(t.provider);
      const lookup = events.filter((e) => e.at >= (t.finishedAt ?? 0) && (e.detail as { lookup?: unknown } | null)?.lookup !== undefined).at(-1);
      return {
        ...this.view(t),
        project: names.get(t.projectId)!,
        input: t.input,
        events: events.map((e) => ({ at: iso(e.at)!, from: e.fromStatus, to: e.toStatus, actor: e.actor, reason: e.reason })),
        lookupLists: provider?.capabilities.lookup ? (provider.capabilities.lookupLists ?? null) : null,
        lookup: lookup?.reason ?? null,
      };
    });
  }

  async reconcile(taskId: number): Promise<CandidateView[]> {
    return refusals(async () => {
      recordJournaledRequests(this.studio);
      const task = this.studio.tasks.get(taskId);
      const { candidates } = await reconcile(this.studio.tasks, task && this.deps.providers.get(task.provider), taskId, this.studio.clock.now());
      return candidates.map((c) => ({ requestId: c.requestId, createdAt: iso(c.createdAt)!, status: c.status, why: c.why }));
    });
  }

  async resolve(taskId: number, decision: DecisionInput): Promise<TaskView> {
    return refusals(() => {
      recordJournaledRequests(this.studio);
      return this.view(resolveUnknown(this.studio.tasks, taskId, decision, this.studio.clock.now()));
    });
  }

  async cancel(taskId: number): Promise<TaskView> {
    return refusals(async () => {
      const task = this.studio.tasks.get(taskId);
      const { task: cancelled } = await cancelTask(this.studio.tasks, task && this.deps.providers.get(task.provider), taskId, this.studio.clock.now());
      return this.view(cancelled);
    });
  }

  async spend(project: string): Promise<SpendReport> {
    const p = this.project(project);
    const total = this.studio.tasks.spend(p.id)[0]!;
    return {
      project: p.name,
      currency: p.currency,
      totals: { actual: money(total.actual)!, estimated: money(total.estimated)!, possiblyCharged: money(total.possiblyCharged)! },
      rows: this.studio.tasks.spendByDay(p.id).map((r) => ({ ...r, actual: money(r.actual)!, estimated: money(r.estimated)!, possiblyCharged: money(r.possiblyCharged)! })),
      byModel: this.studio.tasks.spendByModel(p.id).map((m) => ({
        ...m,
        billed: money(m.billed)!,
        estimatedForBilled: money(m.estimatedForBilled)!,
        estimatedOnly: money(m.estimatedOnly)!,
        possiblyCharged: money(m.possiblyCharged)!,
      })),
    };
  }

  async spendCsv(project: string): Promise<string> {
    const report = await this.spend(project);
    const lines = report.rows.map((r) => [r.day, r.provider, r.actual, r.estimated, r.possiblyCharged, report.currency].join(','));
    return ['day,provider,billed,estimated,possibly_charged,currency', ...lines].join('\n') + '\n';
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
    };
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
