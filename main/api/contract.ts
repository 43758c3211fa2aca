/**
 * The one interface every UI talks to: `window.studio` in the desktop app (through the preload), the same
 * methods over HTTP from the loopback host. Types only: the renderer imports them with `import type`.
 * Money is in currency units (dollars, not micro-units); times are ISO 8601.
 */

// The one way money is shown, by every UI as by the command line (see domain/money.ts).
export { amountWords, POSSIBLY_CHARGED_WORDS } from '../domain/money.ts';
export { BASIS_WORDS } from '../domain/costBasis.ts';
import type { DraftEstimateView, DraftInput, DraftView } from './draftTypes.ts';
export type { DraftEstimateView, DraftInput, DraftView };
import type { CancelPreview, CandidateView, DecisionInput, EtaView, Kind, Status, TaskEventView, TaskPage, TaskRefView, TaskView, UnknownTask } from './taskTypes.ts';
export type { CancelPreview, CandidateView, DecisionInput, EtaView, Kind, Status, TaskEventView, TaskPage, TaskRefView, TaskView, UnknownTask };
import type { ProjectSummary } from './projectTypes.ts';
export type { ProjectSummary };
import type { CheapestView, EstimateStep, EstimateView, GenerateOptions, LostResultView, MissingKeyView, NewTakeOptions, ProviderOfferView } from './estimateTypes.ts';
export type { CheapestView, EstimateStep, EstimateView, GenerateOptions, LostResultView, MissingKeyView, NewTakeOptions, ProviderOfferView };
import type { ModelSpendView, ProjectSpendView, ProviderSpendView, SpendOverview, SpendReport, SpendRowView, SpendTotals } from './spendTypes.ts';
export type { ModelSpendView, ProjectSpendView, ProviderSpendView, SpendOverview, SpendReport, SpendRowView, SpendTotals };
import type { CreditPlanChange, CreditPlanChoice, CreditPlanView, KeySource, SettingsPatch, SettingsView, TeamChange, TeamView } from './settingsTypes.ts';
export type { CreditPlanChange, CreditPlanChoice, CreditPlanView, KeySource, SettingsPatch, SettingsView, TeamChange, TeamView };
import type { FieldShape, ModelCatalogueView, ModelView, OptionView, ProviderView, StepKindView } from './modelTypes.ts';
export type { FieldShape, ModelCatalogueView, ModelView, OptionView, ProviderView, StepKindView };
import type { PlanStepView, ScenePlanView, StepState } from './planTypes.ts';
export type { PlanStepView, ScenePlanView, StepState };
import type { TakeView } from './takeTypes.ts';
export type { TakeView };
import type { LibraryItem, LibraryPage, LibraryQuery, OutputFileView, TaskDetail } from './libraryTypes.ts';
export type { LibraryItem, LibraryPage, LibraryQuery, OutputFileView, TaskDetail };
import type { FilmExportView, FilmRendersView, Preset, PresetChoice } from './exportTypes.ts';
export type { FilmExportView, FilmRendersView, Preset, PresetChoice };

/** What changed, pushed to the page so it refreshes what it shows. */
export interface ChangeEvent {
  /** Increases with every change to the database. */
  version: number;
  needsDecision: number;
}

export interface StudioApi {
  listProjects(): Promise<ProjectSummary[]>;
  createProject(name: string): Promise<ProjectSummary>;
  /** The stored storyboard with its `revision`, which a save of it carries back; null when there is none. */
  getStoryboard(project: string): Promise<unknown | null>;
  /**
   * Saves and returns the new revision. `storyboard.revision` is the revision it was made from (as getStoryboard
   * gave it; none or 0 for a new storyboard): a save made from an older one than is stored is refused (HTTP 409).
   */
  saveStoryboard(project: string, storyboard: unknown): Promise<number>;
  /** The saved storyboard's revision (0 for none), even when it no longer passes the checks: what its replacement is made from. */
  storyboardRevision(project: string): Promise<number>;
  /** What drafting a storyboard from an idea costs (nothing when the same idea was drafted before), and draws it (see draftService.ts). */
  estimateDraft(project: string, input: DraftInput): Promise<DraftEstimateView>;
  draftStoryboard(project: string, input: DraftInput): Promise<DraftView>;
  setBudget(project: string, amount: number | null): Promise<void>;
  estimate(project: string, newTakes?: string[], options?: NewTakeOptions): Promise<EstimateView>;
  generate(project: string, newTakes?: string[], options?: GenerateOptions): Promise<EstimateView>;
  /**
   * Moves one scene (or every scene) to the provider that makes the same model for less; buys nothing. `revision` is
   * the storyboard's the estimate was of: one saved since is refused (HTTP 409), never overwritten.
   */
  moveToCheapest(project: string, change: { scene?: string; revision: number }): Promise<CheapestView>;
  listTasks(project: string, offset: number, limit: number): Promise<TaskPage>;
  unknownTasks(): Promise<UnknownTask[]>;
  reconcile(taskId: number): Promise<CandidateView[]>;
  resolve(taskId: number, decision: DecisionInput): Promise<TaskView>;
  cancel(taskId: number): Promise<TaskView>;
  spend(project: string): Promise<SpendReport>;
  /** The spend as CSV: of one project, or of every project (one more column, the project) when null. */
  spendCsv(project: string | null): Promise<string>;
  /** Every project's spend against its budget, and spend per provider and per model over all of them. */
  spendOverview(): Promise<SpendOverview>;
  /** One page of every result the studio saved, across projects, newest first. */
  library(query: LibraryQuery): Promise<LibraryPage>;
  /** Deletes a result's files (it stays listed, with what it cost; nothing is refunded). */
  deleteOutput(taskId: number): Promise<LibraryItem>;
  /** A task's history, what was sent, its request id, its money figures with their sources, and its files. */
  taskDetail(taskId: number): Promise<TaskDetail>;
  /** What cancelling a task would mean: whether it was sent and may be charged, and what is cancelled with it. */
  cancelPreview(taskId: number): Promise<CancelPreview>;
  getSettings(): Promise<SettingsView>;
  saveSettings(patch: SettingsPatch): Promise<SettingsView>;
  /** Saves the team database and this machine's name in settings; they take effect when the studio next starts. */
  saveTeam(change: TeamChange): Promise<SettingsView>;
  /** Whether the engine is working, or paused and why (the database locked by another program, a full disk). */
  engineStatus(): Promise<EngineStatus>;
  /** Every provider with its models, each model's price and its source, its options, and whether the provider has a key. */
  listModels(): Promise<ModelCatalogueView>;
  /** The project's storyboard as steps per scene, each with the task standing for it now and where it stands. */
  scenePlan(project: string): Promise<ScenePlanView>;
  /** Every take of each scene (or of one), in scene and take order. */
  takes(project: string, scene?: string): Promise<TakeView[]>;
  /** Makes a take the one its scene renders; buys nothing. Refused for a take whose result is lost. */
  pickTake(project: string, scene: string, take: number): Promise<TakeView>;
  /** Exports the film in a preset's shape or format, as a render of its own; buys nothing. Refused while a scene is not made. */
  exportFilm(project: string, preset: Preset): Promise<TaskView>;
  /** The presets for the project's film, its exports, and every render of it by id and status. */
  filmRenders(project: string): Promise<FilmRendersView>;
  /**
   * "Copy diagnostics": text a person can send when something went wrong: versions, folders, the engine's state and
   * the last log lines, with every key cut out (see diagnosticsCalls.ts).
   */
  diagnostics(): Promise<string>;
}

export interface EngineStatus {
  paused: { reason: string; since: string } | null;
}

export const API_METHODS = [
  'listProjects',
  'createProject',
  'getStoryboard',
  'storyboardRevision',
  'saveStoryboard',
  'estimateDraft',
  'draftStoryboard',
  'setBudget',
  'estimate',
  'generate',
  'moveToCheapest',
  'listTasks',
  'unknownTasks',
  'reconcile',
  'resolve',
  'cancel',
  'spend',
  'spendCsv',
  'spendOverview',
  'library',
  'deleteOutput',
  'taskDetail',
  'cancelPreview',
  'getSettings',
  'saveSettings',
  'saveTeam',
  'engineStatus',
  'listModels',
  'scenePlan',
  'takes',
  'pickTake',
  'exportFilm',
  'filmRenders',
  'diagnostics',
] as const satisfies readonly (keyof StudioApi)[];

/** An error a person can act on, carried across IPC and HTTP as its message. */
export interface ApiErrorBody {
  error: string;
}
