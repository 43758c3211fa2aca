import type { FilmTimeline } from '../domain/filmTimeline.ts';

/** FFmpeg's metadata format escapes these with a backslash (https://ffmpeg.org/ffmpeg-formats.html#Metadata-1). */
const escaped = (text: string) => text.replace(/[=;#\\\n]/g, (c) => `\\${c}`);

/**
 * A chapter per scene, named by its id, from where the scene starts showing (a crossfade into it included) to
 * where the next starts: a player's chapter list then jumps to each scene.
 */
export function chaptersText(ids: readonly string[], timeline: FilmTimeline): string {
  const ms = (frames: number) => Math.round((frames * 1000) / timeline.fps);
  const lines = [';FFMETADATA1'];
  timeline.spans.forEach((span, i) => {
    const end = timeline.spans[i + 1]?.start ?? timeline.frames;
    lines.push('[CHAPTER]', 'TIMEBASE=1/1000', `START=${ms(span.start)}`, `END=${ms(end)}`, `title=${escaped(ids[i] ?? `scene ${i + 1}`)}`);
  });
  return `${lines.join('\n')}\n`;
}
