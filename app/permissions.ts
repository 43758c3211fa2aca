import { isAppUrl } from './window.ts';

/**
 * What the app's own pages get: 'fullscreen', which the <video> full-screen button asks for
 * (WebContents::EnterFullscreenModeForTab routes it through the permission handler, and a denied request
 * never settles: electron/electron#37719), 'notifications', for the page's "your film is ready" (the web
 * Notification API, which Electron shows as the system's own), and 'clipboard-sanitized-write', for "Copy diagnostics"
 * (navigator.clipboard.writeText; "Request access to write to the clipboard", docs/api/session.md). Everything else,
 * reading the clipboard included, and any other origin, is denied.
 */
const ALLOWED = new Set(['fullscreen', 'notifications', 'clipboard-sanitized-write']);

export function allowPermission(permission: string, requestingUrl: string | undefined): boolean {
  return ALLOWED.has(permission) && requestingUrl !== undefined && isAppUrl(requestingUrl);
}
