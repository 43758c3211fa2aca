import type { IpcMainInvokeEvent } from 'electron';
import type { Answer } from './engineProtocol.ts';
import { checkOwnMusicCall, checkOwnPictureCall, IpcRefused } from './ipcValidation.ts';

export type Sender = Pick<IpcMainInvokeEvent, 'senderFrame' | 'sender'>;

/** The frame a call came from, as the IPC checks judge it (app/ipcValidation.ts). */
export const senderOf = (event: Sender) => (event.senderFrame ? { url: event.senderFrame.url, isMainFrame: event.senderFrame === event.sender.mainFrame } : null);

/**
 * The desktop's "Use your own picture": the preload sends the path of the file dropped or picked (the page never
 * sees it) on `studio:own`, and the picture is checked and copied into the project as an upload would be. Music for
 * the storyboard's music bed comes the same way on `studio:own-music`. The call is checked here, then done by
 * `use`: the engine process (app/engineAnswers.ts, ownFileAnswer).
 */
export function wireOwnPictures(
  ipc: { handle(channel: string, listener: (event: Sender, ...args: unknown[]) => unknown): void },
  use: (what: 'picture' | 'music', args: unknown[]) => Promise<Answer>,
): void {
  const wire = (channel: string, what: 'picture' | 'music', check: (args: unknown, sender: ReturnType<typeof senderOf>) => void) =>
    ipc.handle(channel, async (event: Sender, args: unknown): Promise<Answer> => {
      try {
        check(args, senderOf(event));
      } catch (err) {
        if (err instanceof IpcRefused) return { error: err.message };
        throw err;
      }
      return use(what, args as unknown[]);
    });
  wire('studio:own', 'picture', checkOwnPictureCall);
  wire('studio:own-music', 'music', checkOwnMusicCall);
}
