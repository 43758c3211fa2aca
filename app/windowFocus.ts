/** The parts of Electron's BrowserWindow that bringing it forward uses. */
export interface FocusableWindow {
  isMinimized(): boolean;
  restore(): void;
  focus(): void;
}

/**
 * Brings the app's window forward when the app is launched again. Electron tells of a launch any time after
 * `ready` ('second-instance', docs/api/app.md), and the window is made and shown only once the engine has
 * started; a launch before that is remembered and done when the window is shown, as Signal Desktop keeps a link
 * opened before its window exists for later (signalapp/Signal-Desktop app/main.main.ts, 'open-url').
 * Whether the window was shown is kept here, not asked of it: macOS calls a minimized or covered window not visible.
 */
export class WindowFocus {
  private shownOnce = false;
  private pending = false;

  /** `window` is the app's window, or null before it is made and after it is closed. */
  constructor(private readonly window: () => FocusableWindow | null) {}

  /** The app was launched again: its window comes forward, now or once it is shown. */
  request(): void {
    const window = this.shownOnce ? this.window() : null;
    if (!window) {
      this.pending = true;
      return;
    }
    if (window.isMinimized()) window.restore();
    window.focus();
  }

  /** The window was shown: a launch that came before is done now. */
  shown(): void {
    this.shownOnce = true;
    if (!this.pending) return;
    this.pending = false;
    this.request();
  }
}
