import type { Storyboard } from '../domain/storyboard.ts';
import { isKling, KLING_STILL, klingTakes } from '../providers/frameSizes.ts';
import type { OwnFound } from './ownFiles.ts';

interface ClipStep {
  kind: string;
  scene: string | null;
  provider: string;
  model: string;
  action: string;
}

/** A still whose shape is this much wider or taller than the frame's loses (or pads) a third of it or more in the render. */
const FAR_SHAPE = 1.5;

const shapeOf = (w: number, h: number) => (w >= h ? `${(w / h).toFixed(2).replace(/\.?0+$/, '')}:1` : `1:${(h / w).toFixed(2).replace(/\.?0+$/, '')}`);

/**
 * The creator's own stills checked against the clip model that is to be bought from them: a refusal in words (what
 * to do) when a new clip's model cannot take its still, else null. Kling takes a still "at least 300x300 px" from
 * 1:2.5 to 2.5:1 (see KLING_STILL in frameSizes.ts), and a still outside that would be refused after it was sent.
 */
export function ownStillRefusal(steps: readonly ClipStep[], stills: ReadonlyMap<string, OwnFound>): string | null {
  for (const step of steps) {
    const size = step.scene !== null ? stills.get(step.scene)?.size : undefined;
    if (step.kind !== 'clip' || step.action === 'reuse' || !size || !isKling(step.provider, step.model) || klingTakes(size.width, size.height)) continue;
    return (
      `scene "${step.scene}": your still is ${size.width}x${size.height}, and ${step.model} makes a clip only from a still of at least ` +
      `${KLING_STILL.minSide} pixels a side and from 1:${KLING_STILL.maxRatio} to ${KLING_STILL.maxRatio}:1; save the still within that ` +
      `(crop or resize it), or use another clip model. Nothing was enqueued.`
    );
  }
  return null;
}

/**
 * For the estimate: each new clip whose model follows the shape of the creator's still (Kling: fal's endpoint has no
 * size field, its clip takes the still's shape) when that shape is far from the frame's, so the render crops or pads
 * it heavily.
 */
export function ownStillShapeNotes(steps: readonly ClipStep[], stills: ReadonlyMap<string, OwnFound>, board: Pick<Storyboard, 'width' | 'height'>): string[] {
  const frame = board.width / board.height;
  return steps.flatMap((step) => {
    const size = step.scene !== null ? stills.get(step.scene)?.size : undefined;
    if (step.kind !== 'clip' || step.action === 'reuse' || !size || !isKling(step.provider, step.model)) return [];
    const apart = Math.exp(Math.abs(Math.log(size.width / size.height / frame)));
    if (apart < FAR_SHAPE) return [];
    return [
      `scene "${step.scene}": your still is ${shapeOf(size.width, size.height)} and the frame ${shapeOf(board.width, board.height)}; ` +
        `${step.model} makes its clip in the still's shape, so the render fits it to the frame and much of it is cut off or padded; ` +
        `crop the still to the frame's shape to fill it`,
    ];
  });
}
