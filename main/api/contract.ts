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
  /** Where the UI can load the result (a studio-media: or /media/ URL), once there is one. */
  outputUrl: string | null;
  error: string | null;
  unknownReason: string | null;
  /** What the studio is waiting on: "still running at the provider after 42 min", a save that keeps failing and why. */
  note: string | null;
  /** How many files the result has (a request for several images keeps them all). */
  outputs: number;
  remoteRequestId: string | null;
  submitStartedAt: string | null;
  createdAt: string;
  finishedAt: string | null;
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
}

export interface CandidateView {
  requestId: string;
  createdAt: string;
  status: string;
  why: string;
}

export type DecisionInput = { adopt: string } | { resubmit: true } | { giveUp: true };

/** An earlier purchase of a step whose result is lost. */
export interface LostResultView {
  taskId: number;
  /** Whether that purchase was certainly charged, or possibly. */
  paid: 'yes' | 'maybe';
  cost: number;
  currency: string;
  /** How the result was lost. */
  why: string;
}

export interface EstimateStep {
  key: string;
  scene: string | null;
  kind: Kind;
  provider: string;
  model: string;
  /** rebuy: paid for before and its result is lost; Generate buys it again only with `rebuyLost`. */
  action: 'new' | 'reuse' | 'rebuy';
  taskId: number | null;
  /** null: no price is known; never counted as 0 (see EstimateView.unpriced). */
  cost: number | null;
  currency: string;
  source: string;
  lost: LostResultView | null;
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
  /** How many new steps have no known price, left out of `total`. */
  unpriced: number;
  /** Earlier steps of the project, spent or enqueued, whose price is unknown: not in `spent`. */
  spentUnpriced: number;
  /** Per provider of the new steps: what its account has left (where it tells an API key), and whether this Generate would pass it. */
  balances: { provider: string; text: string; over: boolean }[];
  spent: number;
  budget: number | null;
  overBy: number;
}

export interface SpendRowView {
  day: string;
  provider: string;
  actual: number;
  estimated: number;
  possiblyCharged: number;
}

export interface SpendReport {
  project: string;
  currency: string;
  totals: SpendTotals;
  rows: SpendRowView[];
  /** Per provider and model: billed against what the same requests had been estimated at. */
  byModel: ModelSpendView[];
}

export interface ModelSpendView {
  provider: string;
  model: string;
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

export interface StudioApi {
  listProjects(): Promise<ProjectSummary[]>;
  createProject(name: string): Promise<ProjectSummary>;
  getStoryboard(project: string): Promise<unknown | null>;
  saveStoryboard(project: string, storyboard: unknown): Promise<void>;
  setBudget(project: string, amount: number | null): Promise<void>;
  estimate(project: string, newTakes?: string[]): Promise<EstimateView>;
  generate(project: string, newTakes?: string[], options?: GenerateOptions): Promise<EstimateView>;
  listTasks(project: string, offset: number, limit: number): Promise<TaskPage>;
  unknownTasks(): Promise<UnknownTask[]>;
  reconcile(taskId: number): Promise<CandidateView[]>;
  resolve(taskId: number, decision: DecisionInput): Promise<TaskView>;
  cancel(taskId: number): Promise<TaskView>;
  spend(project: string): Promise<SpendReport>;
  spendCsv(project: string): Promise<string>;
  getSettings(): Promise<SettingsView>;
  saveSettings(patch: SettingsPatch): Promise<SettingsView>;
  /** Whether the engine is working, or paused and why (the database locked by another program, a full disk). */
  engineStatus(): Promise<EngineStatus>;
}

export interface EngineStatus {
  paused: { reason: string; since: string } | null;
}

export const API_METHODS = [
  'listProjects',
  'createProject',
  'getStoryboard',
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
  'getSettings',
  'saveSettings',
  'engineStatus',
] as const satisfies readonly (keyof StudioApi)[];

/** An error a person can act on, carried across IPC and HTTP as its message. */
export interface ApiErrorBody {
  error: string;
}
