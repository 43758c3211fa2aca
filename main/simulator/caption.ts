/**
 * How the simulator's caption (the prompt, drawn on its stills and clips) fits the frame: wrapped into lines and
 * sized so the block stays inside the part of the picture a clip's push-in keeps (it zooms to 1.3, keeping the
 * middle 77%), in portrait frames as in landscape ones.
 */

export interface CaptionLayout {
  lines: string[];
  fontSize: number;
}

/** The longest caption drawn, as before. */
const MAX_CHARS = 80;
/** DejaVu Sans' advance is under 0.62 em for the letters of most prompts (its "m" is wider, its "i" narrower). */
const CHAR_EM = 0.62;
const LINE_EM = 1.25;
/** The share of the frame's width and height the caption may take. */
const WIDTH_SHARE = 0.7;
const HEIGHT_SHARE = 0.6;
const FONT_MIN = 10;

/** Words into lines of at most `perLine` characters; a word longer than a line is cut. */
export function wrap(text: string, perLine: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    for (let rest = word; rest.length > 0; ) {
      const room = line ? perLine - line.length - 1 : perLine;
      if (rest.length <= room) {
        line = line ? `${line} ${rest}` : rest;
        rest = '';
      } else if (line) {
        lines.push(line);
        line = '';
      } else {
        lines.push(rest.slice(0, perLine));
        rest = rest.slice(perLine);
      }
    }
  }
  if (line) lines.push(line);
  return lines;
}

/** The largest font (from the size a landscape frame always had, down) whose wrapped caption fits the frame. */
export function captionLayout(prompt: string, width: number, height: number): CaptionLayout {
  const text = prompt.slice(0, MAX_CHARS);
  for (let fontSize = Math.max(FONT_MIN, Math.round(Math.min(width, height) / 13)); ; fontSize--) {
    const perLine = Math.max(1, Math.floor((width * WIDTH_SHARE) / (fontSize * CHAR_EM)));
    const lines = wrap(text, perLine);
    if (fontSize <= FONT_MIN || lines.length * fontSize * LINE_EM <= height * HEIGHT_SHARE) return { lines, fontSize };
  }
}
