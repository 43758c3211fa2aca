/** The takes of a scene, as the StudioApi (contract.ts) shows them; types only, as the renderer reads them. */

import type { Status } from './taskTypes.ts';

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
  /** The seed its image and its clip were sent with; null for a step with none (the creator's own still). */
  imageSeed: number | null;
  clipSeed: number | null;
  /** The creator's own still or clip the storyboard names for its scene (`name`: its file's name, or "task 12", "take 2"): then no take of the scene is picked. */
  yours: { kind: 'image' | 'clip'; name: string } | null;
  /** From a pick: the own still or clip it took out of the storyboard, so this take is rendered in its place. */
  replaced?: { kind: 'image' | 'clip'; name: string } | null;
  /** Its image, clip and narration; `reused`: made first by an earlier take of the scene, so not in this take's cost. */
  steps: { kind: 'image' | 'clip' | 'speech'; taskId: number; provider: string; model: string; status: Status; reused: boolean }[];
  /** What this take bought, estimated; null when no price is known. */
  costEstimated: number | null;
  /** What this take bought, billed from what the providers reported; null until there is a billed figure. */
  costBilled: number | null;
  /** Whether `costBilled` is the providers' bills, counts priced from the catalogue, or both (docs/money.md). */
  costBilledBasis: 'billed' | 'counted from usage' | 'billed and counted from usage' | null;
  currency: string;
  createdAt: string;
  finishedAt: string | null;
  /** Where the UI can load its image and clip, once they are made. */
  imageUrl: string | null;
  clipUrl: string | null;
}
