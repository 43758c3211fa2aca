/** The StudioApi's exports of the finished film: each a render of its own in a preset's shape or format, buying nothing. */

import { exportName, PRESETS, presetFrame, type Preset } from '../domain/presets.ts';
import type { Task } from '../domain/tasks/model.ts';
import { ApiError, refusals } from './apiErrors.ts';
import type { ServiceContext } from './serviceContext.ts';
import { etas, taskView } from './taskView.ts';
import type { FilmExportView, FilmRendersView, PresetChoice, TaskView } from './contract.ts';

type Frame = { width: number; height: number; fps: number };

const USES: Record<Preset, string> = {
  '1080p': 'Full HD, for YouTube and most players',
  '4k': 'for big screens; the slowest to make',
  vertical: 'for Reels, Shorts and TikTok',
  square: 'for feeds that show squares',
  webm: 'for web pages (VP9 video, Opus sound)',
  'gif-preview': 'silent, for chats and link previews',
};

/** What a preset makes of a film of this frame, in a creator's words. */
export function presetLabel(preset: Preset, frame: Frame): string {
  const made = presetFrame(preset, frame);
  const size = `${made.width} × ${made.height}`;
  if (preset === 'gif-preview') return `GIF preview (first ${made.seconds} s, ${size})`;
  if (preset === 'webm') return `WebM ${size} (VP9)`;
  const name = { '1080p': '1080p', '4k': '4K', vertical: 'Vertical', square: 'Square' }[preset];
  return `${name} ${size} (MP4)`;
}

const presetOf = (t: Task): Preset | null => ((t.input as { preset?: Preset }).preset ?? null);

function readChoice(value: unknown): Preset {
  if (!PRESETS.includes(value as Preset)) throw new ApiError(`there is no export preset "${String(value)}"; pick one of ${PRESETS.join(', ')}`);
  return value as Preset;
}

/** The project's saved frame, or null while its storyboard is missing or no longer passes the checks. */
async function frameOf(ctx: ServiceContext, projectId: number): Promise<Frame | null> {
  const board = await ctx.studio.storyboards.get(projectId).catch(() => undefined);
  return board ? { width: board.width, height: board.height, fps: board.fps } : null;
}

/** Exports the film as `preset` (a render of its own, named after the project and the preset). Refused while a scene is not made yet. */
export async function exportFilm(ctx: ServiceContext, project: string, preset: string): Promise<TaskView> {
  const chosen = readChoice(preset);
  return refusals(async () => {
    const done = await ctx.pipeline.render(project, chosen);
    const id = done.steps.find((s) => s.kind === 'render')!.taskId!;
    return taskView(ctx, (await ctx.studio.tasks.get(id))!);
  });
}

/** The presets for the project's film, its exports, and every render of it by id and status. */
export async function filmRenders(ctx: ServiceContext, project: string): Promise<FilmRendersView> {
  const p = await ctx.project(project);
  const renders = (await ctx.studio.tasks.list({ projectId: p.id })).filter((t) => t.kind === 'render').sort((a, b) => b.id - a.id);
  const frame = await frameOf(ctx, p.id);
  const presets: PresetChoice[] = frame ? PRESETS.map((preset) => ({ preset, label: presetLabel(preset, frame), use: USES[preset] })) : [];
  const exported = renders.filter((t) => presetOf(t) !== null && t.status !== 'CANCELLED');
  const eta = await etas(ctx, exported);
  const exports: FilmExportView[] = [];
  for (const t of exported) {
    const input = t.input as { preset: Preset; width: number; height: number; fps: number; container?: 'mp4' | 'webm' | 'gif'; title?: string };
    exports.push({
      preset: input.preset,
      // Labelled by the frame it was made in, which the project's may have left since.
      label: presetLabel(input.preset, { width: input.width, height: input.height, fps: input.fps }),
      fileName: exportName(input.title ?? project, input.preset, input.container ?? 'mp4'),
      task: await taskView(ctx, t, new Map(), eta),
    });
  }
  return { presets, exports, renders: renders.map((t) => ({ id: t.id, status: t.status, preset: presetOf(t) })) };
}
