import type { Storyboard } from '../domain/storyboard.ts';
import type { OwnFound } from './ownFiles.ts';

/** A shape this close to the frame's (under 2 % apart) is the frame's: nothing worth saying is cut. */
const SAME_SHAPE = 1.02;

/** The share of a picture of this shape that filling a frame of that shape cuts away (crop: scale to cover, cut the overflow). */
export function coverCut(width: number, height: number, frameWidth: number, frameHeight: number): number {
  const a = width / height;
  const b = frameWidth / frameHeight;
  return 1 - Math.min(a, b) / Math.max(a, b);
}

interface ClipStep {
  kind: string;
  scene: string | null;
  input: Record<string, unknown>;
}

/**
 * For the estimate: how much of the creator's own picture or clip the frame cuts, by the project's fit. With "crop",
 * the render cuts what overflows the frame. A clip model asked for the frame's size (the simulator takes `width` and
 * `height`) makes its clip in that shape from the still, so it is cut there whatever the fit; a model that follows
 * the still (Kling) leaves the fit to the render, where "pad" and "blur" keep all of it.
 */
export function ownShapeCuts(board: Pick<Storyboard, 'width' | 'height' | 'fit'>, stills: ReadonlyMap<string, OwnFound>, clips: ReadonlyMap<string, OwnFound>, steps: readonly ClipStep[]): string[] {
  const percent = (cut: number) => `${Math.round(cut * 100)} %`;
  const apart = (w: number, h: number) => Math.exp(Math.abs(Math.log(w / h / (board.width / board.height)))) >= SAME_SHAPE;
  const notes: string[] = [];
  for (const [scene, still] of stills) {
    if (!still.size || !apart(still.size.width, still.size.height)) continue;
    const cut = percent(coverCut(still.size.width, still.size.height, board.width, board.height));
    const step = steps.find((s) => s.kind === 'clip' && s.scene === scene);
    const sized = step !== undefined && typeof step.input.width === 'number' && typeof step.input.height === 'number';
    if (board.fit === 'crop') notes.push(`scene "${scene}": fit "crop" cuts about ${cut} of your picture to fill the ${board.width}x${board.height} frame; set the project's fit to "pad" or "blur" to keep all of it`);
    else if (sized) notes.push(`scene "${scene}": the clip model is asked for the ${board.width}x${board.height} frame, so it cuts about ${cut} of your picture before fit "${board.fit}" applies; crop the picture to the frame's shape to choose what stays`);
  }
  for (const [scene, clip] of clips) {
    if (!clip.size || board.fit !== 'crop' || !apart(clip.size.width, clip.size.height)) continue;
    notes.push(`scene "${scene}": fit "crop" cuts about ${percent(coverCut(clip.size.width, clip.size.height, board.width, board.height))} of your clip's picture to fill the ${board.width}x${board.height} frame; set the project's fit to "pad" or "blur" to keep all of it`);
  }
  return notes;
}
