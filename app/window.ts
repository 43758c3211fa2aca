import type { BrowserWindowConstructorOptions } from 'electron';

/** The app's own pages: the built renderer, loaded from the app:// scheme. */
export const APP_ORIGIN = 'app://studio';

/** A window that gives the page nothing but `window.studio`: isolated, sandboxed, no Node; no DevTools once packaged. */
export function windowOptions(preload: string, packaged: boolean): BrowserWindowConstructorOptions {
  return {
    width: 1400,
    height: 900,
    minWidth: 960,
    minHeight: 600,
    backgroundColor: '#14161a',
    show: false,
    title: 'Take Studio',
    webPreferences: {
      preload,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      webviewTag: false,
      spellcheck: false,
      devTools: !packaged,
    },
  };
}

/** Content-Security-Policy sent as a response header with every page of the app. */
export const APP_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' studio-media: data: blob:",
  "media-src 'self' studio-media:",
  "connect-src 'self'",
  "object-src 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/** Only the app's own pages may be shown; the check parses the URL, never compares prefixes. */
export function isAppUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === 'app:' && u.host === 'studio';
  } catch {
    return false;
  }
}
