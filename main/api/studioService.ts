import { serviceContext, type ServiceContext, type ServiceDeps } from './serviceContext.ts';
import { taskView, type Etas } from './taskView.ts';
import * as projects from './projectCalls.ts';
import * as generating from './generateCalls.ts';
import * as cheapest from './cheapestCalls.ts';
import * as tasks from './taskCalls.ts';
import * as spending from './spendCalls.ts';
import * as library from './libraryCalls.ts';
import * as making from './takeCalls.ts';
import * as settings from './settingsCalls.ts';
import * as exporting from './exportCalls.ts';
import { diagnostics } from './diagnosticsCalls.ts';
import type { Task } from '../domain/tasks/model.ts';
import type { DraftEstimateView, DraftInput, DraftView } from './draftTypes.ts';
import type {
  CancelPreview,
  LibraryItem,
  LibraryPage,
  LibraryQuery,
  SpendOverview,
  TaskDetail,
  CandidateView,
  CheapestView,
  DecisionInput,
  EngineStatus,
  EstimateView,
  FilmRendersView,
  GenerateOptions,
  NewTakeOptions,
  ModelCatalogueView,
  Preset,
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

export { ApiConflict, ApiError } from './apiErrors.ts';
export type { KeyStore, ServiceDeps } from './serviceContext.ts';

/** The StudioApi over one data folder, with the engine running in the same process; each group of calls lives in its own module. */
export class StudioService implements StudioApi {
  private readonly ctx: ServiceContext;

  constructor(deps: ServiceDeps) {
    this.ctx = serviceContext(deps);
  }

  /** See taskView. */
  async view(t: Task, labels: ReadonlyMap<number, string> = new Map(), eta?: Etas): Promise<TaskView> {
    return taskView(this.ctx, t, labels, eta);
  }

  async listProjects(): Promise<ProjectSummary[]> {
    return projects.listProjects(this.ctx);
  }

  async createProject(name: string): Promise<ProjectSummary> {
    return projects.createProject(this.ctx, name);
  }

  async getStoryboard(project: string): Promise<unknown | null> {
    return projects.getStoryboard(this.ctx, project);
  }

  async storyboardRevision(project: string): Promise<number> {
    return projects.storyboardRevision(this.ctx, project);
  }

  async estimateDraft(project: string, input: DraftInput): Promise<DraftEstimateView> {
    return projects.estimateDraft(this.ctx, project, input);
  }

  async draftStoryboard(project: string, input: DraftInput): Promise<DraftView> {
    return projects.draftStoryboard(this.ctx, project, input);
  }

  async saveStoryboard(project: string, storyboard: unknown): Promise<number> {
    return projects.saveStoryboard(this.ctx, project, storyboard);
  }

  async setBudget(project: string, amount: number | null): Promise<void> {
    return projects.setBudget(this.ctx, project, amount);
  }

  async estimate(project: string, newTakes?: string[], options?: NewTakeOptions): Promise<EstimateView> {
    return generating.estimate(this.ctx, project, newTakes, options);
  }

  async generate(project: string, newTakes?: string[], options?: GenerateOptions): Promise<EstimateView> {
    return generating.generate(this.ctx, project, newTakes, options);
  }

  async moveToCheapest(project: string, change: { scene?: string; revision: number }): Promise<CheapestView> {
    return cheapest.moveToCheapest(this.ctx, project, change);
  }

  async listTasks(project: string, offset: number, limit: number): Promise<TaskPage> {
    return tasks.listTasks(this.ctx, project, offset, limit);
  }

  async unknownTasks(): Promise<UnknownTask[]> {
    return tasks.unknownTasks(this.ctx);
  }

  async reconcile(taskId: number): Promise<CandidateView[]> {
    return tasks.reconcile(this.ctx, taskId);
  }

  async resolve(taskId: number, decision: DecisionInput): Promise<TaskView> {
    return tasks.resolve(this.ctx, taskId, decision);
  }

  async cancel(taskId: number): Promise<TaskView> {
    return tasks.cancel(this.ctx, taskId);
  }

  async cancelPreview(taskId: number): Promise<CancelPreview> {
    return tasks.cancelPreview(this.ctx, taskId);
  }

  async spend(project: string): Promise<SpendReport> {
    return spending.spend(this.ctx, project);
  }

  async spendCsv(project: string | null): Promise<string> {
    return spending.spendCsv(this.ctx, project);
  }

  async spendOverview(): Promise<SpendOverview> {
    return spending.spendOverview(this.ctx);
  }

  async library(query: LibraryQuery): Promise<LibraryPage> {
    return library.library(this.ctx, query);
  }

  async deleteOutput(taskId: number): Promise<LibraryItem> {
    return library.deleteOutput(this.ctx, taskId);
  }

  async taskDetail(taskId: number): Promise<TaskDetail> {
    return library.taskDetail(this.ctx, taskId);
  }

  async scenePlan(project: string): Promise<ScenePlanView> {
    return making.scenePlan(this.ctx, project);
  }

  async takes(project: string, scene?: string): Promise<TakeView[]> {
    return making.takes(this.ctx, project, scene);
  }

  async pickTake(project: string, scene: string, take: number): Promise<TakeView> {
    return making.pickTake(this.ctx, project, scene, take);
  }

  async exportFilm(project: string, preset: Preset): Promise<TaskView> {
    return exporting.exportFilm(this.ctx, project, preset);
  }

  async filmRenders(project: string): Promise<FilmRendersView> {
    return exporting.filmRenders(this.ctx, project);
  }

  async diagnostics(): Promise<string> {
    return diagnostics(this.ctx);
  }

  async listModels(): Promise<ModelCatalogueView> {
    return settings.listModels(this.ctx);
  }

  async engineStatus(): Promise<EngineStatus> {
    return settings.engineStatus(this.ctx);
  }

  async getSettings(): Promise<SettingsView> {
    return settings.getSettings(this.ctx);
  }

  async saveTeam(change: TeamChange): Promise<SettingsView> {
    return settings.saveTeam(this.ctx, change);
  }

  async saveSettings(patch: SettingsPatch): Promise<SettingsView> {
    return settings.saveSettings(this.ctx, patch);
  }
}
