import type { IpcMainInvokeEvent } from 'electron';
import { useOwnPicture } from '../main/api/ownPictureFile.ts';
import { ApiError } from '../main/api/studioService.ts';
import type { Studio } from '../main/studio.ts';
import { checkOwnPictureCall, IpcRefused } from './ipcValidation.ts';

type Sender = Pick<IpcMainInvokeEvent, 'senderFrame' | 'sender'>;

/**
 * The desktop's "Use your own picture": the preload sends the path of the file dropped or picked (the page never
 * sees it) on `studio:own`, and the picture is checked and copied into the project as an upload would be.
 */
export function wireOwnPictures(ipc: { handle(channel: string, listener: (event: Sender, ...args: unknown[]) => unknown): void }, studio: Studio, log: (m: string) => void): void {
  ipc.handle('studio:own', async (event, args: unknown) => {
    try {
      checkOwnPictureCall(args, event.senderFrame ? { url: event.senderFrame.url, isMainFrame: event.senderFrame === event.sender.mainFrame } : null);
      const [project, scene, path] = args;
      return { result: await useOwnPicture(studio, project, scene, path) };
    } catch (err) {
      if (err instanceof ApiError || err instanceof IpcRefused) return { error: err.message };
      log(`own picture: ${(err as Error).stack}`);
      return { error: 'the studio hit an internal error; it was logged' };
    }
  });
}
