// A stand-in for the `electron` module, so the desktop bundle's own wiring runs under plain Node where the
// Electron binary cannot be installed. It records what the bundle asks for and reports it on stderr as
// "electron-standin: <event> <json>" lines, which the test reads. It plays Electron's parts only as far as
// the bundle uses them; it is no model of Electron's behaviour.
import { fork } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { constants as osConstants } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';

const report = (event, detail = {}) => process.stderr.write(`electron-standin: ${event} ${JSON.stringify(detail)}\n`);

// The app this stand-in plays is the checkout it lives in: Electron reads the version from the app's package.json.
const APP_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
// Electron sets process.resourcesPath (docs/api/process.md); a test names the folder where a packaged app's would be.
if (process.env.STANDIN_RESOURCES_PATH) process.resourcesPath = process.env.STANDIN_RESOURCES_PATH;

class App extends EventEmitter {
  // A test asks for a packaged app with STANDIN_PACKAGED=1 (electron-updater checks only when packaged).
  isPackaged = process.env.STANDIN_PACKAGED === '1';
  name = 'Electron';
  paths = {};
  constructor() {
    super();
    // When the bundle starts listening for another launch, which Electron tells only to a listener there is.
    this.on('newListener', (event) => event === 'second-instance' && report('listen', { event }));
  }
  getVersion() {
    return JSON.parse(readFileSync(`${APP_ROOT}package.json`, 'utf8')).version;
  }
  getName() {
    return this.name;
  }
  getAppPath() {
    return APP_ROOT;
  }
  setName(name) {
    this.name = name;
    report('setName', { name });
  }
  setPath(name, path) {
    this.paths[name] = path;
    report('setPath', { name, path });
  }
  getPath(name) {
    // Unset, the logs and the crash dumps are in userData, as Electron keeps them on Linux and Windows (docs/api/app.md,
    // setAppLogsPath; docs/api/crash-reporter.md, 'Crashpad').
    if (!this.paths[name] && name === 'logs') return join(this.paths.userData, 'logs');
    if (!this.paths[name] && name === 'crashDumps') return join(this.paths.userData, 'Crashpad');
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
    // Another launch just after ready, while the bundle is still starting (Electron may tell of one any time
    // after ready, docs/api/app.md 'second-instance').
    if (process.env.STANDIN_SECOND_INSTANCE_AT_READY === '1') setImmediate(() => setImmediate(() => this.launchedAgain()));
    return new Promise((resolve) => setImmediate(resolve));
  }
  launchedAgain() {
    report('secondInstance', { listeners: this.listenerCount('second-instance') });
    this.emit('second-instance', {}, [], process.cwd());
  }
  quit() {
    report('quit');
    const event = { defaultPrevented: false, preventDefault() {
      this.defaultPrevented = true;
    } };
    this.emit('before-quit', event);
    if (event.defaultPrevented) return;
    this.emit('will-quit', { preventDefault() {} });
    // Then 'quit' with the exit code, as Browser::Quit, NotifyAndShutdown and Shutdown do (shell/browser/browser.cc);
    // app.exit skips before-quit and will-quit but not this (docs/api/app.md).
    this.emit('quit', {}, 0);
    report('exit', { code: 0 });
    process.exit(0);
  }
  exit(code) {
    this.emit('quit', {}, code);
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
  /**
   * Electron's ClientRequest played by Node's, whose events and response stream electron-updater's HTTP executor
   * reads alike (builder-util-runtime httpExecutor.js). Node follows no redirect, as `redirect: 'manual'` asks.
   */
  request({ session: _session, redirect: _redirect, ...options }) {
    report('netRequest', { url: `${options.protocol}//${options.hostname}${options.port ? `:${options.port}` : ''}${options.path}` });
    return (options.protocol === 'https:' ? httpsRequest : httpRequest)(options);
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
  fromPartition: (partition) => ({ partition }),
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
  /** Attached to a window or not (docs/api/dialog.md); the person presses the first button. */
  async showMessageBox(windowOrOptions, maybeOptions) {
    const { type, message, detail } = maybeOptions ?? windowOrOptions;
    report('showMessageBox', { type, message, detail, attached: maybeOptions !== undefined });
    return { response: 0, checkboxChecked: false };
  },
};

export const crashReporter = {
  start(options) {
    report('crashReporterStart', options);
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
    this.page = new EventEmitter();
    this.webContents = Object.assign(new EventEmitter(), {
      // What the bundle sends the page reaches a test's script of the page (STANDIN_DRIVE).
      send: (channel, ...args) => void this.page.emit(channel, ...args),
      setWindowOpenHandler: () => undefined,
      mainFrame: { url: 'app://studio/index.html' },
      reload: () => {
        report('reload');
        setImmediate(() => this.pageLoaded());
      },
    });
    // A test makes the page's process die at a moment of its choosing (a paid request in flight) by sending the
    // signal STANDIN_RENDERER_GONE_ON names, e.g. SIGUSR2.
    if (process.env.STANDIN_RENDERER_GONE_ON) process.on(process.env.STANDIN_RENDERER_GONE_ON, () => this.pageGone());
  }
  /** The page's process dies, as a crashed renderer's does ('render-process-gone', docs/api/web-contents.md). */
  pageGone() {
    report('renderProcessGone', { reason: 'crashed' });
    this.webContents.emit('render-process-gone', {}, { reason: 'crashed', exitCode: 139 });
  }
  /**
   * The page has loaded: Electron's 'did-finish-load'. A test makes the page's process die after each of its first
   * STANDIN_RENDERER_GONE loads, as a crashed renderer's does ('render-process-gone', docs/api/web-contents.md).
   */
  pageLoaded() {
    this.webContents.emit('did-finish-load');
    this.deaths ??= 0;
    if (this.deaths >= Number(process.env.STANDIN_RENDERER_GONE ?? 0)) return;
    this.deaths++;
    setImmediate(() => {
      report('renderProcessGone', { reason: 'crashed' });
      this.webContents.emit('render-process-gone', {}, { reason: 'crashed', exitCode: 139 });
    });
  }
  async loadURL(url) {
    // A test holds a slow start's page load until it sends the signal STANDIN_LOAD_ON names.
    if (process.env.STANDIN_LOAD_ON) {
      const held = new Promise((resolve) => process.once(process.env.STANDIN_LOAD_ON, resolve));
      report('loadHeld');
      await held;
    }
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
    this.pageLoaded();
    if (process.env.STANDIN_DRIVE) void this.drive(process.env.STANDIN_DRIVE);
    if (process.env.STANDIN_QUIT_AFTER_LOAD === '1') setImmediate(() => app.quit());
    if (process.env.STANDIN_CLOSE_AFTER_LOAD === '1') setImmediate(() => this.close());
  }
  /**
   * A test's script of what the page does: the ES module `path`, whose default export is given `invoke`, which calls an
   * IPC handler as the preload does, `page`, on which what the bundle sends the page arrives, and `report`. A script
   * that throws is reported, and the app exits 1.
   */
  async drive(path) {
    const sender = { sender: this.webContents, senderFrame: this.webContents.mainFrame };
    try {
      const { default: script } = await import(pathToFileURL(path).href);
      await script({ invoke: (channel, ...args) => ipcHandlers.get(channel)(sender, ...args), page: this.page, report });
    } catch (err) {
      report('driveFailed', { message: err.stack ?? String(err) });
      app.exit(1);
    }
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
  show() {
    report('show');
  }
  isMinimized() {
    return false;
  }
  restore() {}
  focus() {
    report('focus');
  }
}

/**
 * Electron's utilityProcess (docs/api/utility-process.md) played by Node's child_process.fork: the child gets
 * process.parentPort from parentPort.mjs, messages are structured clones both ways, as Electron's are, and the
 * events are Electron's: 'spawn', 'message' with the message, 'exit' with the code. Each spawn is reported with
 * the child's pid, so a test can kill it.
 */
class UtilityProcess extends EventEmitter {
  constructor(modulePath, args = [], options = {}) {
    super();
    this.killed = false;
    const child = fork(modulePath, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      // Not the parent's --import of the stand-in: a utility process has no BrowserWindow nor app to play.
      execArgv: [...(options.execArgv ?? []), '--import', new URL('./parentPort.mjs', import.meta.url).href],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    this.child = child;
    this.pid = child.pid;
    child.on('spawn', () => {
      report('utilityProcess', { pid: child.pid, serviceName: options.serviceName ?? null });
      this.emit('spawn');
    });
    child.on('message', (message) => this.emit('message', message));
    child.on('exit', (code, signal) => {
      // Electron's code is waitpid's: a signal's number for a process it ended, but 0 after child.kill() sent
      // SIGTERM or SIGKILL (HandleTermination in shell/browser/api/electron_api_utility_process.cc).
      const exitCode = signal === null ? code : this.killed && (signal === 'SIGTERM' || signal === 'SIGKILL') ? 0 : osConstants.signals[signal];
      this.pid = undefined;
      this.emit('exit', exitCode);
    });
  }
  postMessage(message) {
    if (this.child.connected) this.child.send(message);
  }
  kill() {
    this.killed = this.child.kill('SIGTERM');
    return this.killed;
  }
}
export const utilityProcess = {
  fork: (modulePath, args, options) => new UtilityProcess(modulePath, args, options),
};
