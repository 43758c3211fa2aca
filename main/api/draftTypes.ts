/** The draft-from-an-idea part of the StudioApi (contract.ts); types only, as the renderer reads them. */

/** What the app sends to draft a storyboard from an idea. */
export interface DraftInput {
  idea: string;
  scenes?: number;
  /** "simulator" or "openai"; left out, the simulator while the project's images come from it, else OpenAI. */
  with?: string;
  /** The storyboard revision the draft replaces (0: none yet); one saved since is never overwritten (HTTP 409). */
  revision?: number;
  /** Draft again an idea whose draft failed after it was paid for (paid again); left out, that is refused (HTTP 409). */
  again?: boolean;
}

export interface DraftEstimateView {
  provider: string;
  model: string;
  /** In currency units; null when no price is known. */
  cost: number | null;
  currency: string;
  source: string;
  simulated: boolean;
  /** The finished draft of the same idea used again at no charge, or null. */
  reuses: number | null;
}

export interface DraftView {
  taskId: number;
  /** The storyboard's new revision. */
  revision: number;
  scenes: number;
  /** Scenes the model wrote beyond those asked for, left out. */
  dropped: number;
  /** Another run of the same draft had put it on the storyboard already. */
  already: boolean;
}
