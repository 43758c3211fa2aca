/** Whether this copy of the app looks for updates, and what it tells the person; pure, so each case is tested. */

import { APP_NAME } from './identity.ts';

export type UpdateCheck = { check: true } | { check: false; why: string };

export interface UpdateCheckInput {
  /** The Settings switch (settings.json `updates.checkAtStart`). */
  switchOn: boolean;
  /** Electron's app.isPackaged: false when run from a checkout. */
  packaged: boolean;
  platform: NodeJS.Platform;
  /** The APPIMAGE variable the AppImage runtime sets to the file it runs from. */
  appImage: string | undefined;
}

/**
 * A copy run from source is updated with the source, as VS Code disables updates when not built and Signal
 * Desktop when not packaged (microsoft/vscode src/vs/platform/update/electron-main/abstractUpdateService.ts
 * initialize; signalapp/Signal-Desktop ts/updater/index.main.ts autoUpdateDisabled). On Linux only the
 * AppImage replaces itself: a deb belongs to the system's package manager, and electron-updater's DebUpdater
 * would run dpkg through pkexec at quit (electron-updater out/DebUpdater.js, LinuxUpdater.js), so a deb is
 * left alone, as Signal starts its updater on Linux only where APPIMAGE is set.
 */
export function updateCheck(input: UpdateCheckInput): UpdateCheck {
  if (!input.switchOn) return { check: false, why: 'updates are off in Settings' };
  if (!input.packaged) return { check: false, why: 'this copy runs from source and is updated with it' };
  if (input.platform === 'linux' && !input.appImage) return { check: false, why: 'this copy was installed by a package (deb), which the system updates' };
  return { check: true };
}

/** What the person is told, once, when an update has been downloaded and checked. */
export function readyMessage(version: string): { title: string; body: string } {
  return { title: `${APP_NAME} ${version} is ready`, body: 'It installs when you quit.' };
}
