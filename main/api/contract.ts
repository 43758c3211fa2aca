/**
 * The one interface every UI talks to: `window.studio` in the desktop app (through the preload), the same
 * methods over HTTP from the loopback host. Types only: the renderer imports them with `import type`.
 * Money is in currency units (dollars, not micro-units); times are ISO 8601.
 */

export type Status = 'PENDING' | 'RUNNING' | 'SUBMITTED' | 'SUCCEEDED' | 'FAILED' | 'OUTCOME_UNKNOWN' | 'CANCELLED';
export type Kind = 'image' | 'clip' | 'speech' | 'render';

export interface SpendTotals {
  /** Billed figures. */
  actual: number;
  /** Accepted work with no billed figure yet. */
  estimated: number;
  /** Requests whose outcome is unknown, and attempts a person resubmitted. */
  possiblyCharged: number;
}

export interface ProjectSummary {
  id: number;
  name: string;
  currency: string;
  budget: number | null;
  spend: SpendTotals;
  counts: Partial<Record<Status, number>>;
}

export interface TaskView {
  id: number;
  projectId: number;
  kind: Kind;
  status: Status;
  provider: string;
  model: string;
  /** What was asked, in a line (the prompt or the words). */
  summary: string;
  progress: number | null;
  charged: 'no' | 'maybe' | 'yes';
  costEstimated: number | null;
  costEstimateSource: string | null;
  /** Billed: worked out from what the provider reported for this request (costActualSource says how). */
  costActual: number | null;
  costActualSource: string | null;
  currency: string;
  /** Its costs are the simulator's made-up money, never charged. */
  simulated: boolean;
  /** Where the UI can load the result (a studio-media: or /media/ URL), once there is one. */
  outputUrl: string | null;
  error: string | null;
  unknownReason: string | null;
  /** What the studio is waiting on: "still running at the provider after 42 min", a save that keeps failing and why. */
  note: string | null;
  /** While it waits for other tasks: what they make ("image of dawn"), else empty. */
  waitingFor: string[];
  /** How many files the result has (a request for several images keeps them all). */
  outputs: number;
  remoteRequestId: string | null;
  submitStartedAt: string | null;
  createdAt: string;
  finishedAt: string | null;
  /** While it runs: when it is likely to finish, from this model's past durations here; null with no history yet. */
  eta: EtaView | null;
}

/** An estimate of when work ends, learned from how long the same model's requests took on this machine. */
export interface EtaView {
  /** When it is likely to be done; null once it runs longer than nine in ten past requests (no honest estimate). */
  expectedAt: string | null;
  /** Past that slow tail. */
  late: boolean;
  /** "about 40 s left", "taking longer than usual". */
  text: string;
}

export interface TaskPage {
  total: number;
  offset: number;
  tasks: TaskView[];
}

export interface TaskEventView {
  at: string;
  from: Status | null;
  to: Status;
  actor: 'engine' | 'person';
  reason: string;
}

export interface UnknownTask extends TaskView {
  project: string;
  /** What was sent, as the provider received it. */
  input: unknown;
  events: TaskEventView[];
  /** Which requests the provider's listing shows, in words from its docs, or null when it cannot list them. */
  lookupLists: string | null;
  /** What the studio's own last lookup for it found, while it looks on its own, or null. */
  lookup: string | null;
  /**
   * While the provider's listing could not show its request yet (it lists one once it has ended): until when the
   * request may still be queued or running there, and how that was reached. A resubmit before then may pay twice,
   * and is refused unless sent with `evenIfRunning`. Null once it could be listed, and for other providers.
   */
  mayRunUntil: { at: string; why: string } | null;
}

export interface CandidateView {
  requestId: string;
  createdAt: string;
  status: string;
  why: string;
}

/** `evenIfRunning`: resubmit although the request may still be queued or running at the provider (otherwise refused then). */
export type DecisionInput = { adopt: string } | { resubmit: true; evenIfRunning?: boolean } | { giveUp: true };

/** An earlier purchase of a step whose result is lost, or kept only by another machine. */
export interface LostResultView {
  taskId: number;
  /** Whether that purchase was certainly charged, or possibly. */
  paid: 'yes' | 'maybe';
  cost: number;
  currency: string;
  /** How the result was lost, or which machine has it and what to do. */
  why: string;
  /** The machine that keeps the result, when another machine does: then it is not lost, only not in this machine's media folder. */
  savedOn?: string;
  /** Each place on this machine its file was looked for, when it is lost. */
  looked?: string[];
}

export interface EstimateStep {
  key: string;
  scene: string | null;
  kind: Kind;
  provider: string;
  model: string;
  /** rebuy: paid for before and its result is lost; Generate buys it again only with `rebuyLost`. */
  action: 'new' | 'reuse' | 'rebuy' | 'yours';
  taskId: number | null;
  /** null: no price is known; never counted as 0 (see EstimateView.unpriced). */
  cost: number | null;
  currency: string;
  source: string;
  lost: LostResultView | null;
  /** The simulator's made-up price: never charged (also in EstimateView.simulatedTotal). */
  simulated: boolean;
  /** Its provider has no key yet: priced all the same; Generate asks for the key first. */
  keyMissing: MissingKeyView | null;
}

/** A provider a Generate needs a key for: its name, and the variable the key can be set in besides Settings. */
export interface MissingKeyView {
  provider: string;
  title: string;
  variable: string;
}

export interface GenerateOptions {
  /** The person confirmed buying again the steps whose paid result was lost; without it such a Generate is refused. */
  rebuyLost?: boolean;
  /** The person confirmed, for a budgeted project, the steps whose price is unknown; without it such a Generate is refused. */
  confirmUnpriced?: boolean;
}

export interface EstimateView {
  project: string;
  currency: string;
  steps: EstimateStep[];
  /** What the new steps of known price may cost. */
  total: number;
  /** The part of `total` that is the simulator's made-up money, never charged. */
  simulatedTotal: number;
  /** Providers the new steps need with no key yet; Generate refuses, naming them, until they are added. */
  missingKeys: MissingKeyView[];
  /** How many new steps have no known price, left out of `total`. */
  unpriced: number;
  /** Earlier steps of the project, spent or enqueued, whose price is unknown: not in `spent`. */
  spentUnpriced: number;
  /** Per provider of the new steps: what its account has left (where it tells an API key), and whether this Generate would pass it. */
  balances: { provider: string; text: string; over: boolean }[];
  spent: number;
  budget: number | null;
  overBy: number;
  /**
   * Each narrated scene, predicted from its words before anything is bought: how long the narration should last,
   * the seconds the scene will fill, what a fit "scene" would cut (0 otherwise), and all of it in one plain line.
   */
  narration: { scene: string; predictedSec: number; sceneSec: number; cutSec: number; text: string }[];
  /** Each model to be used that cannot make the project's exact shape, and the nearest it makes, in one plain line. */
  shape: string[];
}

export interface SpendRowView {
  day: string;
  provider: string;
  /** The simulator's made-up money, never charged. */
  simulated: boolean;
  actual: number;
  estimated: number;
  possiblyCharged: number;
}

export interface SpendReport {
  project: string;
  currency: string;
  /** Real and simulated money together; `real` and `simulated` give each apart, as a person should read them. */
  totals: SpendTotals;
  /** Money the providers charge (or may). */
  real: SpendTotals;
  /** The simulator's made-up money, never charged. */
  simulated: SpendTotals;
  rows: SpendRowView[];
  /** Per provider and model: billed against what the same requests had been estimated at. */
  byModel: ModelSpendView[];
}

export interface ModelSpendView {
  provider: string;
  model: string;
  /** The simulator's made-up money, never charged. */
  simulated: boolean;
  tasks: number;
  billed: number;
  estimatedForBilled: number;
  billedUnestimated: number;
  estimatedOnly: number;
  possiblyCharged: number;
}

/** Where a provider's key comes from; 'unreadable': kept encrypted here, but this machine's keyring cannot decrypt it. */
export type KeySource = 'settings' | 'environment' | 'keychain' | 'unreadable' | null;

export interface SettingsView {
  concurrency: Record<Kind, number>;
  leaseMs: number;
  pollDeadlineMs: number;
  ffmpegPath: string | null;
  /** Whether each provider has a key, and where it comes from; keys themselves never leave the engine. */
  keys: Record<string, KeySource>;
  /** False where keys can only be kept as plain text (Linux without a keyring). */
  keysEncrypted: boolean;
  /** Ask before a Generate that costs more than this (currency units), or never when null. */
  confirmAbove: number | null;
  keepAwake: boolean;
  /** Team mode on this machine. */
  team: TeamView;
}

/** Where this studio keeps its tasks, and the team database and machine name saved for the next start. */
export interface TeamView {
  /** In use now: the database on this machine (its file), or the team database (its address, password hidden). */
  store: { kind: 'embedded' | 'team'; where: string };
  /** What named the team database in use: --db, STUDIO_DATABASE_URL or settings; null on the embedded one. */
  storeFrom: 'flag' | 'environment' | 'settings' | null;
  /** The team database saved in settings on this machine, password hidden; null when none is. */
  databaseUrl: string | null;
  /** The name this machine goes by now, in owner ids and on the files it saves. */
  machineName: string;
  /** The name saved in settings; null: the computer's own name. */
  savedMachineName: string | null;
  /** True when STUDIO_MACHINE_NAME sets the name, over settings. */
  machineNameFromEnvironment: boolean;
  /** The media folder in use now, where saved files go; null: none is set, and they go in the data folder. */
  mediaDir: string | null;
  /** The media folder saved in settings; null when none is. */
  savedMediaDir: string | null;
}

/** A change to team mode on this machine, used from the studio's next start; null removes the saved value. */
export interface TeamChange {
  /** postgres://user:password@host:5432/studio; null: the database on this machine. */
  databaseUrl?: string | null;
  machineName?: string | null;
  /** The media folder the team shares, where this machine mounts it (a full path); null: none. */
  mediaDir?: string | null;
}

export interface SettingsPatch {
  concurrency?: Partial<Record<Kind, number>>;
  leaseMs?: number;
  pollDeadlineMs?: number;
  confirmAbove?: number | null;
  keepAwake?: boolean;
  /** A provider's key, or null to remove it. */
  key?: { provider: string; value: string | null };
}

/** What changed, pushed to the page so it refreshes what it shows. */
export interface ChangeEvent {
  /** Increases with every change to the database. */
  version: number;
  needsDecision: number;
}

/** One input field of a model, as the studio's input schema declares it, for the UI to draw an input for. */
export type FieldShape =
  | { type: 'string'; oneOf?: readonly string[]; maxLength?: number }
  | { type: 'number' | 'integer'; min?: number; max?: number }
  | { type: 'boolean' }
  | { type: 'object'; fields: OptionView[] }
  | { type: 'either'; of: FieldShape[] };

export interface OptionView {
  name: string;
  required: boolean;
  hint: string | null;
  shape: FieldShape;
}

export type StepKindView = 'image' | 'clip' | 'speech';

export interface ModelView {
  id: string;
  kind: StepKindView;
  title: string;
  /** The price in words ("0.025 USD per megapixel"), or null where no price is known. */
  price: string | null;
  /** Where the price comes from (the catalogue's page and date, your own price), or why it is unknown. */
  priceSource: string;
  /** What it takes, in words, from its input schema: "size: 1024x1024, 1536x1024", "voice: alloy, ash". */
  takes: string[];
  /** The inputs a storyboard step may set for it (stored in the step's `options`); prompt, text and seed come from the scene. */
  options: OptionView[];
}

export interface ProviderView {
  id: string;
  title: string;
  /** Where its key comes from; null: it has none yet ("add a key in Settings"). 'none needed' for the simulator. */
  key: KeySource | 'none needed';
  models: ModelView[];
}

export interface ModelCatalogueView {
  providers: ProviderView[];
  /** What a step uses when neither the project nor the scene chooses (settings "defaults"). */
  defaults: Record<StepKindView, { provider: string; model: string }>;
}

/** Where one step of the current plan stands, in a creator's words. */
export type StepState = 'not generated' | 'waiting' | 'queued' | 'sending' | 'at the provider' | 'ready' | 'needs your decision' | 'paid, result lost' | 'failed' | 'cancelled';

export interface PlanStepView {
  key: string;
  kind: Kind;
  scene: string | null;
  /** "image of dawn". */
  label: string;
  provider: string;
  model: string;
  state: StepState;
  /** The steps it waits for, by label ("image of dawn"), while it waits. */
  waitingFor: string[];
  /** The task standing for it now (its output, progress, costs), or null when none does. */
  task: TaskView | null;
  /** For a paid step whose result is lost: that purchase. */
  lost: LostResultView | null;
}

export interface ScenePlanView {
  scenes: { id: string; steps: PlanStepView[] }[];
  /** The finished video's step. */
  render: PlanStepView | null;
  /**
   * When the finished video is likely to be ready: the longest chain of what is left (image, clip, render), from
   * each model's past durations here. Null when it is ready, when something waits on a person or a Generate, or
   * when a model of a step left has no history yet.
   */
  videoReady: EtaView | null;
}

/** One file of a saved result. */
export interface OutputFileView {
  index: number;
  /** Where the UI loads it (a studio-media: or /media/ URL); null once the person deleted it. */
  url: string | null;
  contentType: string | null;
  bytes: number | null;
  /** The machine that saved it, or null for files saved before machines were recorded. */
  machine: string | null;
  /**
   * Why this machine cannot show it, or null when it can: which machine saved it and where, when it is not in this
   * machine's media folder, or that it is not the file that was saved. In the library only its size is compared;
   * a task's detail compares its checksum.
   */
  problem: string | null;
}

export interface LibraryQuery {
  project?: string | null;
  kind?: Kind | null;
  provider?: string | null;
  /** ISO 8601 instants: results finished from `from`, before `to`. */
  from?: string | null;
  to?: string | null;
  /** Words of the prompt or narration, matched without case. */
  search?: string | null;
  offset: number;
  limit: number;
}

export interface LibraryItem extends TaskView {
  project: string;
  /** The scene that used it (from the renders that did), or null. */
  scene: string | null;
  /** What was sent, as the provider received it. */
  input: unknown;
  files: OutputFileView[];
  /** When the person deleted its files, or null while they are kept. */
  deletedAt: string | null;
}

export interface LibraryPage {
  total: number;
  offset: number;
  items: LibraryItem[];
  /** Every project and provider with a saved result, for the filters. */
  projects: string[];
  providers: string[];
}

export interface TaskDetail extends LibraryItem {
  events: TaskEventView[];
  /** The tasks it was made from, and the ones made from it. */
  dependsOn: TaskRefView[];
  dependents: TaskRefView[];
}

export interface TaskRefView {
  id: number;
  kind: Kind;
  status: Status;
  summary: string;
}

export interface CancelPreview {
  taskId: number;
  /** Whether the request left for the provider (and so may be charged). */
  sent: boolean;
  /** What it may cost if charged: the billed figure, else the estimate; null when no price is known. */
  mayCost: number | null;
  currency: string;
  /** In words: "already sent to fal; it may be charged (about 0.04 USD)", or that nothing was sent. */
  message: string;
  /** Pending steps that need it and are cancelled with it. */
  dependents: TaskRefView[];
}

export interface ProjectSpendView {
  name: string;
  currency: string;
  billed: number;
  estimated: number;
  possiblyCharged: number;
  budget: number | null;
  /** billed + estimated + possibly charged, over the budget; null without a budget (or with a budget of 0). */
  shareUsed: number | null;
  /** The part of billed, estimated and possibly charged that is the simulator's made-up money, never charged. */
  simulated: SpendTotals;
}

export interface ProviderSpendView {
  provider: string;
  currency: string;
  /** The simulator's made-up money, never charged. */
  simulated: boolean;
  billed: number;
  estimated: number;
  possiblyCharged: number;
}

export interface SpendOverview {
  projects: ProjectSpendView[];
  byProvider: ProviderSpendView[];
  byModel: (ModelSpendView & { currency: string })[];
}

/** One take of a scene: what it was made from, by which tasks, what it cost, and whether the render uses it. */
export interface TakeView {
  scene: string;
  take: number;
  /** The take of its scene that goes into the render. */
  picked: boolean;
  /** ready, making, needs your decision; or lost, failed, cancelled: then `problem` says why it cannot be picked. */
  state: 'ready' | 'making' | 'needs your decision' | 'lost' | 'failed' | 'cancelled';
  problem: string | null;
  imagePrompt: string;
  motionPrompt: string;
  narration: string | null;
  duration: number;
  seed: number;
  /** Its image, clip and narration; `reused`: made first by an earlier take of the scene, so not in this take's cost. */
  steps: { kind: 'image' | 'clip' | 'speech'; taskId: number; provider: string; model: string; status: Status; reused: boolean }[];
  /** What this take bought, estimated; null when no price is known. */
  costEstimated: number | null;
  /** What this take bought, billed from what the providers reported; null until there is a billed figure. */
  costBilled: number | null;
  currency: string;
  createdAt: string;
  finishedAt: string | null;
  /** Where the UI can load its image and clip, once they are made. */
  imageUrl: string | null;
  clipUrl: string | null;
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
  setBudget(project: string, amount: number | null): Promise<void>;
  estimate(project: string, newTakes?: string[]): Promise<EstimateView>;
  generate(project: string, newTakes?: string[], options?: GenerateOptions): Promise<EstimateView>;
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
  'setBudget',
  'estimate',
  'generate',
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
] as const satisfies readonly (keyof StudioApi)[];

/** An error a person can act on, carried across IPC and HTTP as its message. */
export interface ApiErrorBody {
  error: string;
}
