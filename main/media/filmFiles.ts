/** The subtitles written beside a film: `render-12.mp4` has `render-12.srt` and `render-12.vtt`. */
export function subtitlesBeside(film: string): { srt: string; vtt: string } {
  const stem = film.replace(/\.(mp4|webm|gif)$/i, '');
  return { srt: `${stem}.srt`, vtt: `${stem}.vtt` };
}

/** The name a film's subtitles are asked for by, after the film's own address: `/media/12/subtitles.vtt`. */
export const SUBTITLES_PATH = 'subtitles.vtt';
