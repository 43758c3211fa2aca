import type { IpcMainInvokeEvent } from 'electron';
import { useOwnMusic, useOwnPicture } from '../main/api/ownPictureFile.ts';
import { ApiError } from '../main/api/studioService.ts';
import type { Studio } from '../main/studio.ts';
import { checkOwnMusicCall, checkOwnPictureCall, IpcRefused } from './ipcValidation.ts';

type Sender = Pick<IpcMainInvokeEvent, 'senderFrame' | 'sender'>;

/**
 * The desktop's "Use your own picture": the preload sends the path of the file dropped or picked (the page never
 * sees it) on `studio:own`, and the picture is checked and copied into the project as an upload would be. Music for
 * the storyboard's music bed comes the same way on `studio:own-music`.
 */
export function wireOwnPictures(ipc: { handle(channel: string, listener: (event: Sender, ...args: unknown[]) => unknown): void }, studio: Studio, log: (m: string) => void): void {
  const answer = (what: string, take: (event: Sender, args: unknown) => Promise<unknown>) => async (event: Sender, args: unknown) => {
    try {
      return { result: await take(event, args) };
    } catch (err) {
      if (err instanceof ApiError || err instanceof IpcRefused) return { error: err.message };
      log(`${what}: ${(err as Error).stack}`);
      return { error: 'the studio hit an internal error; it was logged' };
    }
  };
  const from = (event: Sender) => (event.senderFrame ? { url: event.senderFrame.url, isMainFrame: event.senderFrame === event.sender.mainFrame } : null);
  ipc.handle(
    'studio:own',
    answer('own picture', async (event, args) => {
      checkOwnPictureCall(args, from(event));
      return useOwnPicture(studio, ...args);
    }),
  );
  ipc.handle(
    'studio:own-music',
    answer('own music', async (event, args) => {
      checkOwnMusicCall(args, from(event));
      return useOwnMusic(studio, ...args);
    }),
  );
}
