import { basename } from 'node:path';
import { INTERNAL_ERROR, type Answer, type EngineRequest } from './engineProtocol.ts';
import { checkCall, checkFileCall, IpcRefused } from './ipcValidation.ts';
import { OutputFileRefused, saveOutputAs, showOutputInFolder, type OutputFileDeps } from './outputFile.ts';
import { senderOf, wireOwnPictures, type Sender } from './ownPicture.ts';

export interface IpcRelayDeps<W> {
  ipc: { handle(channel: string, listener: (event: Sender, ...args: unknown[]) => unknown): void };
  /** The engine process's answer (app/engineRelay.ts). */
  request(request: EngineRequest): Promise<Answer>;
  /** The dialog, the file manager and the window, which are the main process's. */
  files: Omit<OutputFileDeps<W>, 'output'>;
  log(message: string): void;
}

/**
 * The page's IPC channels: each call is checked here, where it arrives (app/ipcValidation.ts), then relayed to the
 * engine process; the answer goes back as the engine gave it. Save as… and Show in folder ask the engine only for
 * the file, and open the dialog or the file manager here.
 */
export function wireStudioIpc<W>(deps: IpcRelayDeps<W>): void {
  const refusedOrBug = (what: string, err: unknown): Answer => {
    if (err instanceof IpcRefused || err instanceof OutputFileRefused) return { error: err.message };
    deps.log(`${what}: ${(err as Error).stack ?? String(err)}`);
    return { error: INTERNAL_ERROR };
  };
  deps.ipc.handle('studio', async (event: Sender, method: unknown, args: unknown) => {
    try {
      checkCall(method as string, args as unknown[], senderOf(event));
    } catch (err) {
      return refusedOrBug(String(method), err);
    }
    return deps.request({ kind: 'api', method: method as string, args: args as unknown[] });
  });
  deps.ipc.handle('studio:file', async (event: Sender, action: unknown, args: unknown) => {
    try {
      checkFileCall(action, args, senderOf(event));
      const taskId = (args as number[])[0]!;
      const found = await deps.request({ kind: 'outputFile', taskId });
      if ('error' in found) return found;
      const files: OutputFileDeps<W> = { ...deps.files, output: () => found.result as { path: string; name: string } | null };
      if (action === 'showOutputInFolder') {
        showOutputInFolder(files, taskId);
        return { result: null };
      }
      // Only the name goes back to the page, to say where the copy went.
      const saved = await saveOutputAs(files, taskId);
      return { result: saved && basename(saved) };
    } catch (err) {
      return refusedOrBug('studio:file', err);
    }
  });
  wireOwnPictures(deps.ipc, (what, args) => deps.request({ kind: 'own', what, args }));
}
