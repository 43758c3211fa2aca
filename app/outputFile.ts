import { extname, join } from 'node:path';

/** The parts of Electron's dialog and shell this module uses, injected so it runs without Electron in tests. */
export interface SaveDialog<W> {
  showSaveDialog(window: W, options: { title: string; defaultPath: string; filters: { name: string; extensions: string[] }[] }): Promise<{ canceled: boolean; filePath?: string }>;
}
export interface FolderShell {
  showItemInFolder(fullPath: string): void;
}

export interface OutputFileDeps<W> {
  dialog: SaveDialog<W>;
  shell: FolderShell;
  copyFile(from: string, to: string): Promise<void>;
  /** A finished task's output file, and the name to offer for a copy of it; null when it has none. */
  output(taskId: number): { path: string; name: string } | null;
  window(): W | null;
  /** Where the save dialog opens (the person's Downloads folder). */
  downloadsDir(): string;
}

export class OutputFileRefused extends Error {}

/** A name a file system takes anywhere: no separators, no characters Windows refuses, not empty. An export names its preset too. */
export function fileName(project: string, kind: string, taskId: number, path: string, preset?: string): string {
  const base = project.replace(/[\\/:*?"<>|\u0000-\u001f]+/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 80) || 'video';
  const film = preset ? `${base} - ${preset}` : base;
  return `${kind === 'render' ? film : `${base} ${kind} ${taskId}`}${extname(path)}`;
}

function outputOf<W>(deps: OutputFileDeps<W>, taskId: number): { path: string; name: string } {
  const out = deps.output(taskId);
  if (!out) throw new OutputFileRefused(`task ${taskId} has no saved result to save or show`);
  return out;
}

/**
 * "Save as…": asks where, then copies the output there. Returns the path saved to, or null when the person
 * cancelled (docs/api/dialog.md: `canceled`, and `filePath` is empty then).
 */
export async function saveOutputAs<W>(deps: OutputFileDeps<W>, taskId: number): Promise<string | null> {
  const out = outputOf(deps, taskId);
  const ext = extname(out.path).slice(1);
  const window = deps.window();
  if (!window) return null;
  const answer = await deps.dialog.showSaveDialog(window, {
    title: 'Save the video as',
    defaultPath: join(deps.downloadsDir(), out.name),
    filters: ext ? [{ name: ext.toUpperCase(), extensions: [ext] }] : [],
  });
  if (answer.canceled || !answer.filePath) return null;
  if (answer.filePath === out.path) return out.path;
  try {
    await deps.copyFile(out.path, answer.filePath);
  } catch (err) {
    throw new OutputFileRefused(`the video could not be saved to ${answer.filePath}: ${(err as Error).message}`);
  }
  return answer.filePath;
}

/** "Show in folder": the file manager opens on the output's folder with the file selected (docs/api/shell.md). */
export function showOutputInFolder<W>(deps: OutputFileDeps<W>, taskId: number): void {
  deps.shell.showItemInFolder(outputOf(deps, taskId).path);
}
