/** The task views of the StudioApi (contract.ts): a task, its history and a decision on it; types only, as the renderer reads them. */

import type { CostBasis } from '../domain/costBasis.ts';

export type Status = 'PENDING' | 'RUNNING' | 'SUBMITTED' | 'SUCCEEDED' | 'FAILED' | 'OUTCOME_UNKNOWN' | 'CANCELLED';
export type Kind = 'image' | 'clip' | 'speech' | 'render' | 'draft';

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
  /** The figure from what the provider reported for this request (costActualSource says how; costBasis whether it is a bill). */
  costActual: number | null;
  costActualSource: string | null;
  /**
   * What the task's figure rests on, decided once here (domain/costBasis.ts): 'billed' only where the provider reported
   * money or credits; 'counted from usage' where it reported what it bills by, priced at the catalogue's price.
   */
  costBasis: CostBasis;
  /**
   * At a provider that bills in credits (ElevenLabs): the credits as it reported them (billed: true), else worked out
   * from the text at the model's credits a character (billed: false, an estimate); null at other providers.
   */
  credits: { count: number; billed: boolean } | null;
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
