// A stand-in for the `electron` module, so the desktop bundle's own wiring runs under plain Node where the
// Electron binary cannot be installed. It records what the bundle asks for and reports it on stderr as
// "electron-standin: <event> <json>" lines, which the test reads. It plays Electron's parts only as far as
// the bundle uses them; it is no model of Electron's behaviour.
import { EventEmitter } from 'node:events';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const report = (event, detail = {}) => process.stderr.write(`electron-standin: ${event} ${JSON.stringify(detail)}\n`);

class App extends EventEmitter {
  isPackaged = false;
  name = 'Electron';
  paths = {};
  setName(name) {
    this.name = name;
    report('setName', { name });
  }
  setPath(name, path) {
    this.paths[name] = path;
    report('setPath', { name, path });
  }
  getPath(name) {
    return this.paths[name];
  }
  setAppUserModelId(id) {
    report('setAppUserModelId', { id });
  }
  requestSingleInstanceLock() {
    report('requestSingleInstanceLock', { userData: this.paths.userData ?? null });
    return process.env.STANDIN_LOCK_TAKEN !== '1';
  }
  whenReady() {
    return new Promise((resolve) => setImmediate(resolve));
  }
  quit() {
    report('quit');
    const event = { defaultPrevented: false, preventDefault() {
      this.defaultPrevented = true;
    } };
    this.emit('before-quit', event);
    if (event.defaultPrevented) return;
    this.emit('will-quit', { preventDefault() {} });
    report('exit', { code: 0 });
    process.exit(0);
  }
  exit(code) {
    report('exit', { code });
    process.exit(code);
  }
}
export const app = new App();
// Electron quits gracefully on the first SIGTERM, SIGINT or SIGHUP and restores the default action for the
// next (GracefulShutdownHandler and InstallShutdownSignalHandlers, which binds Browser::Quit, in
// shell/browser/electron_browser_main_parts_posix.cc and electron_browser_main_parts.cc).
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.once(signal, () => app.quit());

const handlers = new Map();
export const protocol = {
  registerSchemesAsPrivileged(schemes) {
    report('registerSchemesAsPrivileged', { schemes: schemes.map((s) => s.scheme) });
  },
  handle(scheme, handler) {
    handlers.set(scheme, handler);
  },
};

export const net = {
  async fetch(url) {
    return new Response(await readFile(fileURLToPath(url)), { headers: { 'content-type': url.endsWith('.html') ? 'text/html' : 'application/octet-stream' } });
  },
};

const ipcHandlers = new Map();
export const ipcMain = {
  handle(channel, handler) {
    ipcHandlers.set(channel, handler);
  },
};

const permission = {};
export const session = {
  defaultSession: {
    setPermissionRequestHandler(handler) {
      permission.request = handler;
    },
    setPermissionCheckHandler(handler) {
      permission.check = handler;
    },
  },
};

export const dialog = {
  showErrorBox(title, content) {
    report('showErrorBox', { title, content });
  },
};

export class Notification {
  static isSupported() {
    return false;
  }
}

export const shell = {
  showItemInFolder(fullPath) {
    report('showItemInFolder', { fullPath });
  },
};
export const powerMonitor = new EventEmitter();
export const powerSaveBlocker = { start: () => 1, stop() {} };

export const safeStorage = {
  isEncryptionAvailable: () => true,
  getSelectedStorageBackend: () => 'basic_text',
  setUsePlainTextEncryption(value) {
    report('setUsePlainTextEncryption', { value });
  },
  encryptString: (plain) => Buffer.from(`v10${plain}`),
  decryptString: (cipher) => cipher.toString().slice(3),
};

export class BrowserWindow extends EventEmitter {
  constructor(options) {
    super();
    report('BrowserWindow', { webPreferences: options.webPreferences });
    this.webContents = Object.assign(new EventEmitter(), {
      send: () => undefined,
      setWindowOpenHandler: () => undefined,
      mainFrame: { url: 'app://studio/index.html' },
    });
  }
  async loadURL(url) {
    // Loads the page through the app:// handler the bundle registered, as Chromium would.
    const page = await handlers.get('app')(new Request(url));
    const html = await page.text();
    const ipc = await ipcHandlers.get('studio')({ sender: this.webContents, senderFrame: this.webContents.mainFrame }, 'listProjects', []);
    report('loaded', {
      url,
      status: page.status,
      csp: page.headers.get('content-security-policy'),
      title: /<title>([^<]*)<\/title>/.exec(html)?.[1] ?? null,
      ipc,
      fullscreen: permission.check?.(this.webContents, 'fullscreen', 'app://studio', { requestingUrl: url }),
      camera: permission.check?.(this.webContents, 'media', 'app://studio', { requestingUrl: url }),
    });
    this.emit('ready-to-show');
    if (process.env.STANDIN_QUIT_AFTER_LOAD === '1') setImmediate(() => app.quit());
    if (process.env.STANDIN_CLOSE_AFTER_LOAD === '1') setImmediate(() => this.close());
  }
  /** The person closes the window: it is destroyed, then the app is told; a launch meanwhile reaches this one. */
  close() {
    for (const method of ['show', 'isMinimized', 'restore', 'focus']) {
      this[method] = () => {
        throw new TypeError('Object has been destroyed');
      };
    }
    this.webContents.send = () => {
      throw new TypeError('Object has been destroyed');
    };
    report('closed');
    this.emit('closed');
    app.emit('second-instance', {}, [], process.cwd());
    app.emit('window-all-closed');
  }
  show() {}
  isMinimized() {
    return false;
  }
  restore() {}
  focus() {}
}
