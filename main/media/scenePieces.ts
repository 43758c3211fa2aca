import type { Fit } from '../domain/frameShape.ts';
import type { Motion, Trim } from '../domain/finishing.ts';
import { escapeFilterValue } from './filterEscape.ts';
import { fitFilters } from './fitFilters.ts';

/**
 * The film's picture is made in pieces, each its own ffmpeg run and its own file: a scene's body (the frames no
 * transition touches) and each crossfade between two scenes. Every piece is encoded the same way, so the film is
 * the pieces joined as they are (the concat demuxer, no second encode) and a changed scene makes only its pieces.
 */
export interface Frame {
  width: number;
  height: number;
  fit: Fit;
  fps: number;
}

/**
 * One scene's picture: its clip (the part `trim` names), brought to the frame, held on its last frame or cut to the
 * scene's frames; or its still, moved over as `still` says.
 */
export interface ScenePicture {
  clip: string;
  frames: number;
  fadeIn: number;
  fadeOut: number;
  trim?: Trim;
  still?: Motion;
}

/** How far a move goes in: a fifth, enough to be seen over a few seconds and little enough to keep the picture sharp. */
const ZOOM = 0.2;

/**
 * zoompan's expressions for a move over `frames` frames (`on` is the frame being made): the zoom, and the top
 * left corner of the part shown. A pan is made at the zoom it needs to have somewhere to go.
 */
function move(motion: Motion, frames: number): { z: string; x: string; y: string } {
  const t = `on/${Math.max(1, frames - 1)}`;
  const centre = { x: 'iw/2-(iw/zoom/2)', y: 'ih/2-(ih/zoom/2)' };
  if (motion === 'push-in') return { z: `1+${ZOOM}*${t}`, ...centre };
  if (motion === 'pull-out') return { z: `${1 + ZOOM}-${ZOOM}*${t}`, ...centre };
  if (motion === 'pan-left') return { z: String(1 + ZOOM), x: `(iw-iw/zoom)*(1-${t})`, y: centre.y };
  if (motion === 'pan-right') return { z: String(1 + ZOOM), x: `(iw-iw/zoom)*${t}`, y: centre.y };
  return { z: '1', ...centre };
}

/** The burned subtitles for a piece: an ASS file in the piece's own time, and where its font is. */
export interface Burn {
  ass: string;
  fontsDir: string;
}

/** The encoding every piece shares: a piece that differed would not join without a second encode. */
export function pieceEncoding(fps: number): string[] {
  return [
    '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20', '-pix_fmt', 'yuv420p', '-r', String(fps),
    '-video_track_timescale', String(fps * 1000), '-an', '-f', 'mp4',
  ];
}

/** The scene as a stream of exactly its frames, from input `index`, its fades applied, as label [to]. */
function sceneStream(index: number, scene: ScenePicture, frame: Frame, to: string): string[] {
  const held = (scene.frames / frame.fps).toFixed(4);
  const fades = [
    ...(scene.fadeIn > 0 ? [`fade=t=in:s=0:n=${scene.fadeIn}`] : []),
    ...(scene.fadeOut > 0 ? [`fade=t=out:s=${scene.frames - scene.fadeOut}:n=${scene.fadeOut}`] : []),
  ].map((f) => `,${f}`).join('');
  const length = `trim=end_frame=${scene.frames},setpts=PTS-STARTPTS${fades}[${to}]`;
  if (scene.still) {
    // The still fitted at twice the frame's size, so the move's whole-pixel steps are half as large and do not judder.
    const m = move(scene.still, scene.frames);
    return [
      ...fitFilters(`[${index}:v]`, `${to}fit`, frame.fit, frame.width * 2, frame.height * 2),
      `[${to}fit]zoompan=z='${m.z}':x='${m.x}':y='${m.y}':d=${scene.frames}:s=${frame.width}x${frame.height}:fps=${frame.fps},setsar=1,${length}`,
    ];
  }
  const trimmed = scene.trim ? [`[${index}:v]trim=start=${scene.trim.in}${scene.trim.out === undefined ? '' : `:end=${scene.trim.out}`},setpts=PTS-STARTPTS[${to}cut]`] : [];
  return [
    ...trimmed,
    ...fitFilters(scene.trim ? `[${to}cut]` : `[${index}:v]`, `${to}fit`, frame.fit, frame.width, frame.height),
    `[${to}fit]fps=${frame.fps},tpad=stop_mode=clone:stop_duration=${held},${length}`,
  ];
}

const burned = (burn: Burn | null) => (burn ? `,ass=filename=${escapeFilterValue(burn.ass)}:fontsdir=${escapeFilterValue(burn.fontsDir)}` : '');

/** A scene's frames `from` (inclusive) to `to` (exclusive). */
export function bodyArgs(frame: Frame, scene: ScenePicture, from: number, to: number, burn: Burn | null, output: string): string[] {
  const filters = [...sceneStream(0, scene, frame, 's'), `[s]trim=start_frame=${from}:end_frame=${to},setpts=PTS-STARTPTS${burned(burn)}[v]`];
  return ['-i', scene.clip, '-filter_complex', filters.join(';'), '-map', '[v]', ...pieceEncoding(frame.fps), output];
}

/** The `frames` where scene `a` ends under scene `b` beginning: b shows through a, from nothing to whole. */
export function crossfadeArgs(frame: Frame, a: ScenePicture, b: ScenePicture, frames: number, burn: Burn | null, output: string): string[] {
  const filters = [
    ...sceneStream(0, a, frame, 'a'),
    ...sceneStream(1, b, frame, 'b'),
    `[a]trim=start_frame=${a.frames - frames}:end_frame=${a.frames},setpts=PTS-STARTPTS[at]`,
    `[b]trim=end_frame=${frames},setpts=PTS-STARTPTS,format=yuva420p,fade=t=in:s=0:n=${frames}:alpha=1[bt]`,
    `[at][bt]overlay=shortest=1,format=yuv420p${burned(burn)}[v]`,
  ];
  return ['-i', a.clip, '-i', b.clip, '-filter_complex', filters.join(';'), '-map', '[v]', ...pieceEncoding(frame.fps), output];
}
