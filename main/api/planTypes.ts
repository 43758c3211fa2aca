/** The scene plan of the StudioApi (contract.ts): each step of the storyboard and where it stands; types only, as the renderer reads them. */

import type { LostResultView } from './estimateTypes.ts';
import type { EtaView, Kind, TaskView } from './taskTypes.ts';

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
