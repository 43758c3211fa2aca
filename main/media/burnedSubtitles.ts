import type { Cue } from '../domain/subtitles.ts';
import { basename } from 'node:path';
import { LINE_MAX } from '../domain/subtitles.ts';
import { FONT } from './fonts.ts';

/** The font every burned subtitle is set in: shipped with the studio, so a machine without fonts renders the same. */
export const SUBTITLE_FONT = 'DejaVu Sans';
export const SUBTITLE_FONT_FILE = basename(FONT);

/** DejaVu Sans' average advance for subtitle text, as a share of the font size. */
const ADVANCE = 0.55;

/**
 * How subtitles sit in a frame of this size. The text is 5% of the height in a wide frame, 4.5% in a square one and
 * 3.3% in a tall one (about 63 px of a 1080 x 1920 frame, read on a phone held upright); a line holds as many
 * characters as fit in 90% of the width, 42 at most. It is lifted off the bottom more in a tall frame, where the
 * apps creators publish to lay their buttons and captions over the lowest fifth.
 */
export function subtitleStyle(width: number, height: number): { size: number; lineMax: number; outline: number; marginV: number; marginH: number } {
  const tall = height > width;
  const size = Math.max(8, Math.round(height * (tall ? 0.033 : height === width ? 0.045 : 0.05)));
  const lineMax = Math.min(LINE_MAX, Math.floor((width * 0.9) / (size * ADVANCE)));
  const share = tall ? 0.2 : height === width ? 0.1 : 0.07;
  return { size, lineMax, outline: Math.max(2, Math.round(size / 12)), marginV: Math.round(height * share), marginH: Math.round(width * 0.05) };
}

function clock(seconds: number): string {
  const cs = Math.max(0, Math.round(seconds * 100));
  return `${Math.floor(cs / 360_000)}:${String(Math.floor(cs / 6000) % 60).padStart(2, '0')}:${String(Math.floor(cs / 100) % 60).padStart(2, '0')}.${String(cs % 100).padStart(2, '0')}`;
}

/** Text as ASS shows it literally: braces would start an override, a backslash an escape. */
const literal = (line: string) => line.replace(/\\/g, '\u29f5').replace(/[{}]/g, (c) => (c === '{' ? '(' : ')'));

/** An ASS script of these cues for a frame of this size: white text, a black outline and a soft shadow. */
export function assScript(cues: readonly Cue[], width: number, height: number): string {
  const s = subtitleStyle(width, height);
  return [
    '[Script Info]',
    'ScriptType: v4.00+',
    `PlayResX: ${width}`,
    `PlayResY: ${height}`,
    'WrapStyle: 2',
    'ScaledBorderAndShadow: yes',
    '',
    '[V4+ Styles]',
    'Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding',
    `Style: Default,${SUBTITLE_FONT},${s.size},&H00FFFFFF,&H00FFFFFF,&H00000000,&H80000000,0,0,0,0,100,100,0,0,1,${s.outline},${Math.max(1, Math.round(s.outline / 2))},2,${s.marginH},${s.marginH},${s.marginV},1`,
    '',
    '[Events]',
    'Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text',
    ...cues.map((c) => `Dialogue: 0,${clock(c.start)},${clock(c.end)},Default,,0,0,0,,${c.lines.map(literal).join('\\N')}`),
    '',
  ].join('\n');
}
