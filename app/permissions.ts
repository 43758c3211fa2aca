import { isAppUrl } from './window.ts';

/**
 * What the app's own pages get: 'fullscreen', which the <video> full-screen button asks for
 * (WebContents::EnterFullscreenModeForTab routes it through the permission handler, and a denied request
 * never settles: electron/electron#37719), and 'notifications', for the page's "your film is ready" (the web
 * Notification API, which Electron shows as the system's own). Everything else, and any other origin, is denied.
 */
const ALLOWED = new Set(['fullscreen', 'notifications']);

export function allowPermission(permission: string, requestingUrl: string | undefined): boolean {
  return ALLOWED.has(permission) && requestingUrl !== undefined && isAppUrl(requestingUrl);
}
