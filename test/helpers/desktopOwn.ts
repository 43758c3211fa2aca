import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { ownFileAnswer } from '../../app/engineAnswers.ts';
import { wireOwnPictures } from '../../app/ownPicture.ts';
import { openStudio } from '../../main/studio.ts';
import { tempDir } from './tmp.ts';

/** The app's own page, as the desktop's IPC checks see it. */
export const APP_PAGE = { url: 'app://studio/index.html', isMainFrame: true };

/**
 * The desktop's handler of `channel` (`studio:own` for a picture or clip, `studio:own-music`), wired to a stand-in
 * for Electron's ipcMain and to the engine's answer on a studio with the project Fox, closed when the test ends.
 */
export async function desktopOwn(channel: string) {
  const dir = tempDir();
  const studio = await openStudio(dir);
  onTestFinished(() => studio.close());
  await studio.projects.ensure('Fox', Date.now());
  const handlers = new Map<string, (event: unknown, ...args: unknown[]) => unknown>();
  const logged: string[] = [];
  wireOwnPictures({ handle: (name, listener) => handlers.set(name, listener as never) }, (what, args) => ownFileAnswer(studio, what, args, (m) => logged.push(m)));
  const mainFrame = {};
  /** What the page gets back for a call from `url` (the app's page unless said otherwise). */
  const call = async (args: unknown, url = APP_PAGE.url, frame: object = mainFrame) =>
    (await handlers.get(channel)!({ senderFrame: Object.assign(frame, { url }), sender: { mainFrame } }, args)) as { result?: unknown; error?: string };
  return { dir, studio, call, logged, media: join(dir, 'projects', '1', 'media') };
}
