import { CUT, type Transition } from './finishing.ts';

/**
 * Where each scene sits in the finished film, in whole frames, once the cuts between them are known. Counting in
 * frames keeps picture and sound the same length: every piece the renderer makes is a whole number of frames, and
 * the sound is laid out by the same counts.
 */
export interface Span {
  /** The film's frame this scene's first frame lands on. */
  start: number;
  /** The scene's own frames, its crossfades included. */
  frames: number;
  /** Frames at its start shown through the previous scene (a crossfade in). */
  head: number;
  /** Frames at its end shown under the next scene (a crossfade out). */
  tail: number;
  /** Frames it fades in from black, and out to black. */
  fadeIn: number;
  fadeOut: number;
}

export interface FilmTimeline {
  fps: number;
  spans: Span[];
  /** The film's frames: the scenes' less every crossfade's overlap. */
  frames: number;
}

/** The seconds a transition takes from the end of the scene before it, and from the start of the scene after it. */
export function transitionShare(t: Transition): number {
  if (t.type === 'crossfade') return t.duration;
  if (t.type === 'fade-black') return t.duration / 2;
  return 0;
}

/**
 * The seconds at a scene's start and end its narration keeps clear of, so no word is faded: the transition into
 * it (from the scene before) and out of it (to the next). The last scene has no transition out.
 */
export function narrationMargins(transitions: readonly Transition[], index: number): { before: number; after: number } {
  const last = index === transitions.length - 1;
  return { before: index === 0 ? 0 : transitionShare(transitions[index - 1]!), after: last ? 0 : transitionShare(transitions[index]!) };
}

/**
 * Lays the scenes end to end. `transitions[i]` is the cut from scene i to scene i + 1 (the last is not used). A
 * transition longer than half of either scene is shortened to it, so every scene keeps a moment of its own.
 */
export function filmTimeline(seconds: readonly number[], transitions: readonly Transition[], fps: number): FilmTimeline {
  const frames = seconds.map((s) => Math.max(1, Math.round(s * fps)));
  const spans: Span[] = frames.map((f) => ({ start: 0, frames: f, head: 0, tail: 0, fadeIn: 0, fadeOut: 0 }));
  for (let i = 0; i + 1 < spans.length; i++) {
    const t = transitions[i] ?? CUT;
    const [a, b] = [spans[i]!, spans[i + 1]!];
    const room = Math.min(Math.floor(a.frames / 2), Math.floor(b.frames / 2));
    const share = Math.min(room, Math.round(transitionShare(t) * fps));
    if (t.type === 'crossfade') [a.tail, b.head] = [share, share];
    if (t.type === 'fade-black') [a.fadeOut, b.fadeIn] = [share, share];
  }
  let at = 0;
  for (const span of spans) {
    span.start = at - span.head;
    at = span.start + span.frames;
  }
  return { fps, spans, frames: at };
}

/** The transitions between scenes: each scene's own, or the storyboard's. */
export function cutsOf(scenes: readonly { transition?: Transition }[], fallback: Transition): Transition[] {
  return scenes.map((s) => s.transition ?? fallback);
}
