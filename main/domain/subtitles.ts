/**
 * Subtitles from the narration: a cue per sentence (a long sentence split into several), at most two lines of at
 * most 42 characters (fewer in a narrow frame), the line length the streaming services' style guides hold to. Each cue is
 * timed by its share of the narration's letters over the narration's spoken length, as measured from its file.
 */
export interface Cue {
  /** Seconds from the start of the film. */
  start: number;
  end: number;
  lines: string[];
}

export const LINE_MAX = 42;
export const LINES_MAX = 2;

function sentences(text: string): string[] {
  return text
    .replace(/\s+/g, ' ')
    .trim()
    .split(/(?<=[.!?…])\s+(?=\S)/u)
    .filter((s) => s !== '');
}

/** Words wrapped into lines of at most `max` characters; a word longer than a line is cut across lines. */
function wrap(sentence: string, max: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (let word of sentence.split(' ')) {
    while (word.length > max) {
      if (line) lines.push(line);
      lines.push(word.slice(0, max));
      word = word.slice(max);
      line = '';
    }
    if (!line) line = word;
    else if (line.length + 1 + word.length <= max) line = `${line} ${word}`;
    else {
      lines.push(line);
      line = word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

/**
 * A sentence too long for one cue, split into as few cues as hold it, their words shared out evenly: no cue is left
 * with a word or two of the sentence's end.
 */
/** A cue's text in lines: two of about the same length where it needs two, never a word left alone on one. */
function balanced(text: string, max: number): string[] {
  const lines = wrap(text, max);
  if (lines.length !== 2) return lines;
  let best: string[] = lines;
  for (let at = text.indexOf(' '); at > 0; at = text.indexOf(' ', at + 1)) {
    const [a, b] = [text.slice(0, at), text.slice(at + 1)];
    if (a.length <= max && b.length <= max && Math.abs(a.length - b.length) < Math.abs(best[0]!.length - best[1]!.length)) best = [a, b];
  }
  return best;
}

function evenCues(sentence: string, max: number): string[][] {
  const lines = wrap(sentence, max);
  if (lines.length <= LINES_MAX) return [balanced(sentence, max)];
  const words = sentence.split(' ');
  for (let count = Math.ceil(lines.length / LINES_MAX); count <= words.length; count++) {
    const share = sentence.length / count;
    const cues: string[][] = [];
    let taken: string[] = [];
    for (const word of words) {
      const before = taken.join(' ').length;
      const after = [...taken, word].join(' ').length;
      // Cut before the word that passes this cue's share, unless it passes by less than it falls short.
      if (taken.length > 0 && after > share && after - share > share - before && cues.length < count - 1) {
        cues.push(balanced(taken.join(' '), max));
        taken = [];
      }
      taken.push(word);
    }
    cues.push(balanced(taken.join(' '), max));
    if (cues.every((c) => c.length <= LINES_MAX)) return cues;
  }
  // A word longer than two lines: its pieces, two lines a cue.
  return Array.from({ length: Math.ceil(lines.length / LINES_MAX) }, (_, i) => lines.slice(i * LINES_MAX, (i + 1) * LINES_MAX));
}

/** The sentences of a narration as cues' lines, two lines a cue at most, `lineMax` characters a line at most. */
export function cueLines(text: string, lineMax = LINE_MAX): string[][] {
  return sentences(text).flatMap((sentence) => evenCues(sentence, Math.min(LINE_MAX, lineMax)));
}

const weight = (lines: string[]) => Math.max(1, lines.join(' ').replace(/[^\p{L}\p{N}]/gu, '').length);

/** One scene's cues: its narration spoken from `start` for `spoken` seconds, cut at `until` if the scene ends first. */
export function sceneCues(text: string, start: number, spoken: number, until = Infinity, lineMax = LINE_MAX): Cue[] {
  const groups = cueLines(text, lineMax);
  const total = groups.reduce((sum, g) => sum + weight(g), 0);
  const cues: Cue[] = [];
  let done = 0;
  for (const lines of groups) {
    const from = start + (spoken * done) / total;
    done += weight(lines);
    const to = Math.min(until, start + (spoken * done) / total);
    if (to - from > 0.04) cues.push({ start: round3(from), end: round3(to), lines });
  }
  return cues;
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

function clock(seconds: number, mark: ',' | '.'): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${mark}${pad(ms % 1000, 3)}`;
}

/** SubRip: numbered cues, comma before the milliseconds. */
export function toSrt(cues: readonly Cue[]): string {
  return cues.map((c, i) => `${i + 1}\n${clock(c.start, ',')} --> ${clock(c.end, ',')}\n${c.lines.join('\n')}\n`).join('\n');
}

/** WebVTT: what a browser's <track> reads. */
export function toVtt(cues: readonly Cue[]): string {
  return `WEBVTT\n\n${cues.map((c) => `${clock(c.start, '.')} --> ${clock(c.end, '.')}\n${c.lines.join('\n').replace(/-->/g, '→')}\n`).join('\n')}`;
}

/** The cues that show between `from` and `to` seconds, in that stretch's own time. */
export function cuesWithin(cues: readonly Cue[], from: number, to: number): Cue[] {
  return cues
    .filter((c) => c.end > from && c.start < to)
    .map((c) => ({ start: round3(Math.max(0, c.start - from)), end: round3(Math.min(to, c.end) - from), lines: c.lines }));
}
