import { spawn } from 'node:child_process';

/**
 * Whether `studio serve` should open the default browser: only where there is a desktop to show it on (a
 * display on Linux and the BSDs; always on macOS and Windows), and never when told not to (`--no-open`,
 * STUDIO_NO_OPEN) or in CI, where nobody would look at it.
 */
export function shouldOpenBrowser(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): boolean {
  if (env.STUDIO_NO_OPEN || env.CI) return false;
  if (platform === 'darwin' || platform === 'win32') return true;
  return Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
}

/** The system's own "open this address" command: it picks the person's default browser. */
export function browserCommand(url: string, platform: NodeJS.Platform = process.platform): [string, string[]] {
  if (platform === 'darwin') return ['open', [url]];
  // rundll32 takes the address as one argument, with no shell in between to read its characters.
  if (platform === 'win32') return ['rundll32', ['url.dll,FileProtocolHandler', url]];
  return ['xdg-open', [url]];
}

/** Opens `url` in the default browser, without waiting for it; `onFail` hears why it could not. */
export function openBrowser(url: string, onFail: (why: string) => void, platform: NodeJS.Platform = process.platform): void {
  const [command, args] = browserCommand(url, platform);
  const child = spawn(command, args, { stdio: 'ignore', detached: true, windowsHide: true });
  child.once('error', (err) => onFail(`${command} could not be run: ${err.message}`));
  child.once('exit', (code) => code !== 0 && code !== null && onFail(`${command} ended with code ${code}`));
  child.unref();
}
