import type { Container } from '../domain/presets.ts';
import { loudnessFilter } from './soundtrack.ts';

/** What the join puts together: the pieces' list, the mix and the gain that meets the loudness, the chapters, the cues. */
export interface JoinInputs {
  container: Container;
  /** The concat demuxer's list of pieces. */
  list: string;
  /**
   * The sound: for an MP4, already encoded (AAC, at its loudness) and copied in; for a WebM, the mix as WAV, lifted
   * by `gain` and encoded here; none for a GIF.
   */
  sound: string | null;
  gain: number | null;
  chapters: string;
  /** The cues as SubRip; none when the film has no narration. */
  srt: string | null;
  seconds: number;
  output: string;
}

/** A GIF's colours: a palette made for the film, dithered so gradients do not band. */
const GIF_FILTER = 'split[a][b];[a]palettegen=stats_mode=diff[p];[b][p]paletteuse=dither=bayer:bayer_scale=4';

/**
 * The film's last ffmpeg run. MP4: the pieces joined as they are (they share one encoding) with the sound as it was
 * encoded (see soundArgs), the cues as a mov_text track, the scenes as chapters. WebM: the same, the picture
 * encoded again as VP9 and the sound as Opus (WebM takes neither H.264 nor AAC), the cues as WebVTT. GIF: the picture
 * alone, with its own palette; a GIF has no sound, subtitles or chapters.
 */
export function joinArgs(j: JoinInputs): string[] {
  const pieces = ['-f', 'concat', '-safe', '0', '-i', j.list];
  const length = ['-t', j.seconds.toFixed(4)];
  if (j.container === 'gif') return [...pieces, '-filter_complex', `[0:v]${GIF_FILTER}`, ...length, '-loop', '0', '-f', 'gif', j.output];
  const subtitles = j.srt ? ['-map', '3:s', '-c:s', j.container === 'webm' ? 'webvtt' : 'mov_text', '-metadata:s:s:0', 'language=und'] : [];
  const codecs =
    j.container === 'webm'
      ? ['-c:v', 'libvpx-vp9', '-b:v', '0', '-crf', '32', '-deadline', 'good', '-cpu-used', '4', '-row-mt', '1', '-pix_fmt', 'yuv420p', '-c:a', 'libopus', '-b:a', '128k']
      : ['-c:v', 'copy', '-c:a', 'copy', '-movflags', '+faststart'];
  return [
    ...pieces,
    '-i', j.sound!,
    '-i', j.chapters,
    ...(j.srt ? ['-i', j.srt] : []),
    '-map', '0:v', '-map', '1:a', ...subtitles,
    '-map_metadata', '2', '-map_chapters', '2',
    ...(j.container === 'webm' ? ['-af', loudnessFilter(j.gain)] : []),
    ...codecs,
    ...length, '-f', j.container, j.output,
  ];
}

/** The mix lifted by `gain` to the loudness and encoded as AAC, once: kept beside the pieces for the renders after. */
export function soundArgs(mix: string, gain: number | null, output: string): string[] {
  return ['-i', mix, '-af', loudnessFilter(gain), '-c:a', 'aac', '-b:a', '192k', '-f', 'mp4', output];
}
