import { isAppUrl } from './window.ts';

/**
 * The one permission the app's own pages get: 'fullscreen', which the <video> full-screen button asks for
 * (WebContents::EnterFullscreenModeForTab routes it through the permission handler, and a denied request
 * never settles: electron/electron#37719). Everything else, and any other origin, is denied.
 */
export function allowPermission(permission: string, requestingUrl: string | undefined): boolean {
  return permission === 'fullscreen' && requestingUrl !== undefined && isAppUrl(requestingUrl);
}
