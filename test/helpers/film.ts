import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ffmpegPath } from '../../main/media/binaries.ts';
import { renderFilm, type FilmJob, type FilmRendered, type FilmScene } from '../../main/media/filmRender.ts';
import { FONTS_DIR } from '../../main/media/fonts.ts';
import { CUT } from '../../main/domain/finishing.ts';

/** A scene as a test gives it: a clip and its seconds, the rest a silent scene with a plain cut. */
export type TestScene = Pick<FilmScene, 'clip' | 'seconds'> & Partial<FilmScene>;

/** Renders these scenes straight through the studio's film renderer, its pieces kept in `dir`/segments. */
export async function renderScenes(dir: string, scenes: TestScene[], frame: FilmJob['frame'], extra: Partial<FilmJob> = {}, output = join(dir, 'film.mp4')): Promise<FilmRendered & { output: string }> {
  const job: FilmJob = {
    frame,
    scenes: scenes.map((s, i) => ({ id: `scene-${i + 1}`, narration: null, narrationAt: 0, clipSoundDb: null, text: null, spoken: null, transition: CUT, ...s })),
    burnSubtitles: false,
    music: null,
    loudness: -14,
    segments: join(dir, 'segments'),
    work: join(dir, `work-${Date.now()}-${Math.random().toString(16).slice(2)}`),
    owner: 'render-1-test',
    fontsDir: FONTS_DIR,
    container: 'mp4',
    output,
    ...extra,
  };
  return { ...(await renderFilm(job, { ffmpeg: ffmpegPath() })), output };
}

/** `seconds` of a two-note chord in AAC, made by ffmpeg: a creator's music file. */
export function chordFile(path: string, seconds: number): string {
  const made = spawnSync(ffmpegPath(), ['-v', 'error', '-f', 'lavfi', '-i', `sine=f=220:d=${seconds}`, '-f', 'lavfi', '-i', `sine=f=330:d=${seconds}`, '-filter_complex', 'amerge=inputs=2', '-c:a', 'aac', '-y', path]);
  if (made.status !== 0) throw new Error(`ffmpeg could not make ${path}: ${made.stderr.toString()}`);
  return path;
}
