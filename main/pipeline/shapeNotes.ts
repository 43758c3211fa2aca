import type { Storyboard } from '../domain/storyboard.ts';
import { sizeFor } from '../providers/frameSizes.ts';

interface Step {
  kind: string;
  provider: string;
  model: string;
  action: 'new' | 'reuse' | 'rebuy' | 'yours';
}

/** For the estimate: each model of a step to be bought that cannot make the project's exact shape, and what it makes instead. */
export function shapeNotes(steps: readonly Step[], board: Pick<Storyboard, 'width' | 'height'>): string[] {
  const notes = steps
    .filter((s) => s.action !== 'reuse' && (s.kind === 'image' || s.kind === 'clip'))
    .map((s) => sizeFor(s.provider, s.model, s.kind as 'image' | 'clip', board.width, board.height).note);
  return [...new Set(notes.filter((n): n is string => n !== null))];
}
