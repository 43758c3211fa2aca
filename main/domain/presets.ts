/**
 * The shapes and formats a finished film is exported in, besides the project's own: each a render of its own, named
 * after the project and the preset, buying nothing.
 */
export type Preset = '1080p' | '4k' | 'vertical' | 'square' | 'webm' | 'gif-preview';

export const PRESETS: readonly Preset[] = ['1080p', '4k', 'vertical', 'square', 'webm', 'gif-preview'];

export type Container = 'mp4' | 'webm' | 'gif';

export interface PresetFrame {
  width: number;
  height: number;
  fps: number;
  container: Container;
  /** Seconds of the film a preview keeps, from its start. */
  seconds?: number;
}

/** A GIF preview: the first seconds, small and at a low frame rate, as a link preview or a chat shows it. */
const GIF_SECONDS = 6;
const GIF_WIDTH = 480;
const GIF_FPS = 10;

const even = (n: number) => Math.max(2, Math.round(n / 2) * 2);

/** The project's shape with its short side at `short` pixels. */
function scaled(width: number, height: number, short: number): { width: number; height: number } {
  const factor = short / Math.min(width, height);
  return { width: even(width * factor), height: even(height * factor) };
}

/** What a preset makes of a project of this frame: 1080p and 4k keep its shape; vertical and square are their own. */
export function presetFrame(preset: Preset, frame: { width: number; height: number; fps: number }): PresetFrame {
  const { fps } = frame;
  if (preset === '1080p') return { ...scaled(frame.width, frame.height, 1080), fps, container: 'mp4' };
  if (preset === '4k') return { ...scaled(frame.width, frame.height, 2160), fps, container: 'mp4' };
  if (preset === 'vertical') return { width: 1080, height: 1920, fps, container: 'mp4' };
  if (preset === 'square') return { width: 1080, height: 1080, fps, container: 'mp4' };
  if (preset === 'webm') return { width: frame.width, height: frame.height, fps, container: 'webm' };
  const small = { width: GIF_WIDTH, height: even((GIF_WIDTH * frame.height) / frame.width) };
  return { ...small, fps: GIF_FPS, container: 'gif', seconds: GIF_SECONDS };
}

export function readPreset(value: string): Preset {
  if (!PRESETS.includes(value as Preset)) throw new Error(`--preset must be one of ${PRESETS.join(', ')}, not "${value}"`);
  return value as Preset;
}

/** The film's file name: the project's name and the preset, with what no file system takes replaced. */
export function exportName(project: string, preset: Preset, container: Container): string {
  const safe = project.replace(/[\\/:*?"<>|\u0000-\u001f]+/g, ' ').replace(/\s+/g, ' ').trim() || 'film';
  return `${safe} - ${preset}.${container}`;
}
