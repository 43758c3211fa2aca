import { contextBridge, ipcRenderer, webUtils } from 'electron';
import { API_METHODS, type ChangeEvent } from '../main/api/contract.ts';

/** The typed StudioApi as `window.studio`, and nothing else: no ipcRenderer, no Node. */
const api: Record<string, unknown> = {};
for (const method of API_METHODS) {
  api[method] = async (...args: unknown[]) => {
    const answer = (await ipcRenderer.invoke('studio', method, args)) as { result?: unknown; error?: string };
    if (answer.error !== undefined) throw new Error(answer.error);
    return answer.result;
  };
}
api.onChange = (listener: (e: ChangeEvent) => void) => {
  const handler = (_event: unknown, e: ChangeEvent) => listener(e);
  ipcRenderer.on('studio:changed', handler);
  return () => ipcRenderer.off('studio:changed', handler);
};

// Desktop only: "Save as…" and "Show in folder" for a task's output; the page never sees a path.
for (const action of ['saveOutputAs', 'showOutputInFolder']) {
  api[action] = async (taskId: number) => {
    const answer = (await ipcRenderer.invoke('studio:file', action, [taskId])) as { result?: unknown; error?: string };
    if (answer.error !== undefined) throw new Error(answer.error);
    return answer.result;
  };
}

// Desktop only: a picture dropped or picked for a scene goes by its path, found here with webUtils.getPathForFile
// (Electron's replacement for File.path: https://www.electronjs.org/docs/latest/api/web-utils), so the page hands
// over the File and never sees or names a path. It is checked and copied as an upload is (app/ownPicture.ts).
api.useOwnPicture = async (project: string, scene: string, file: File) => {
  const answer = (await ipcRenderer.invoke('studio:own', [project, scene, webUtils.getPathForFile(file)])) as { result?: unknown; error?: string };
  if (answer.error !== undefined) throw new Error(answer.error);
  return answer.result;
};

// Desktop only: a music file picked for the storyboard's music bed, by its path as a picture is (app/ownPicture.ts).
api.useOwnMusic = async (project: string, file: File) => {
  const answer = (await ipcRenderer.invoke('studio:own-music', [project, webUtils.getPathForFile(file)])) as { result?: unknown; error?: string };
  if (answer.error !== undefined) throw new Error(answer.error);
  return answer.result;
};

contextBridge.exposeInMainWorld('studio', api);
