/**
 * A value (a path) made safe as one filter option inside an ffmpeg filtergraph, e.g. drawtext's
 * fontfile=. https://ffmpeg.org/ffmpeg-filters.html#Notes-on-filtergraph-escaping: level 1 escapes
 * \ ' : within the option value, level 2 then escapes \ ' [ ] , ; within the filtergraph description.
 * The third (shell) level does not apply: ffmpeg is started with an argument array, never through a shell.
 */
export function escapeFilterValue(value: string): string {
  const option = value.replace(/[\\':]/g, '\\$&');
  return option.replace(/[\\'[\],;]/g, '\\$&');
}
