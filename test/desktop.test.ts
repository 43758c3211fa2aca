import { execFile, execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { APP_ID, APP_NAME } from '../app/identity.ts';
import { electronBinding, electronBindingDir, electronDriverDir, NativeBindingMissing } from '../app/nativeBinding.ts';
import { allowPermission } from '../app/permissions.ts';
import { quitOnSessionEnd, wireQuit } from '../app/quit.ts';
import { claimDataFolder, DataFolderRefused, explainStartFailure, launch, startOrExplain, type StartingApp } from '../app/startup.ts';
import { WindowFocus } from '../app/windowFocus.ts';
import { openDatabase } from '../main/db/database.ts';
import { DatabaseRefused } from '../main/db/refused.ts';
import { useNativeBinding } from '../main/db/nativeBinding.ts';
import { startRuntime } from '../main/runtime.ts';
import { openStudio } from '../main/studio.ts';
import { FAL_MODEL, falQueue, realMedia, type Ledger } from './fakes/providers.ts';
import { startFake } from './fakes/server.ts';
import { sinceQuit } from './helpers/desktopBundle.ts';
import { integrityOf, startRegistry } from './helpers/npmRegistry.ts';
import { writeSettings } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';
import { until } from './helpers/wait.ts';

// The Electron binary cannot be installed here, so the shell's own code runs with Electron's parts injected,
// and the built bundle runs under Node with a stand-in `electron` module (test/fakes/electron).
const ROOT = join(import.meta.dirname, '..');
const NODE_BUILD = join(ROOT, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
const execFileAsync = promisify(execFile);
// The desktop app's driver as package.json pins it, and the Electron it is staged for.
const PINNED_DRIVER = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).config.electronSqlite as { version: string; integrity: string };
const ELECTRON = {
  version: (JSON.parse(readFileSync(join(ROOT, 'node_modules', 'electron', 'package.json'), 'utf8')) as { version: string }).version,
  abi: readFileSync(join(ROOT, 'node_modules', 'electron', 'abi_version'), 'utf8').trim(),
};

/** Electron's app as far as start-up uses it, recording the order of calls. */
function startingApp(lockFree = true, ready: Promise<unknown> = Promise.resolve()): StartingApp & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    setName: (name) => calls.push(`setName ${name}`),
    setPath: (name, path) => calls.push(`setPath ${name} ${path}`),
    requestSingleInstanceLock: () => (calls.push('requestSingleInstanceLock'), lockFree),
    on: (event) => calls.push(`on ${event}`),
    whenReady: () => ready,
    quit: () => calls.push('quit'),
    exit: (code) => calls.push(`exit ${code}`),
  };
}

describe('start-up', () => {
  it('resolves and makes the data folder, and sets it before asking for the lock, which lives in it', () => {
    const dir = tempDir();
    const app = startingApp();
    const relative = join('studio-test-relative', String(process.pid));
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      expect(claimDataFolder(app, { STUDIO_DATA_DIR: relative })).toBe(join(dir, relative));
    } finally {
      process.chdir(cwd);
    }
    expect(app.calls).toEqual([`setName ${APP_NAME}`, `setPath userData ${join(dir, relative)}`, 'requestSingleInstanceLock']);
  });

  it('quits at once, with no window, when another run holds the data folder', () => {
    const app = startingApp(false);
    expect(claimDataFolder(app, { STUDIO_DATA_DIR: tempDir() })).toBeNull();
    expect(app.calls.at(-1)).toBe('quit');
  });

  it('explains a data folder that cannot be made, then exits, never asking for the lock', async () => {
    const file = join(tempDir(), 'not-a-folder');
    writeFileSync(file, 'x');
    for (const dir of [file, join(file, 'below')]) {
      expect(() => claimDataFolder(startingApp(), { STUDIO_DATA_DIR: dir })).toThrow(DataFolderRefused);
      // Thrown from the entry module, Electron would only show its own dialog and keep running (lib/browser/init.ts).
      const app = startingApp();
      const shown: [string, string][] = [];
      await launch(app, { showErrorBox: (t, c) => shown.push([t, c]) }, async () => undefined, () => undefined, () => undefined, { STUDIO_DATA_DIR: dir });
      expect(shown).toEqual([['Take Studio could not start', expect.stringMatching(new RegExp(`^${dir} cannot be used as the data folder \\(E(EXIST|NOTDIR).*\\)\\. Make it a folder you can write to, or set STUDIO_DATA_DIR to one\\.$`))]]);
      expect(app.calls).toEqual([`setName ${APP_NAME}`, 'exit 1']);
    }
  });

  it('listens for another launch right after the lock is held, before Electron is ready, and not where the lock is refused', async () => {
    let ready!: () => void;
    const app = startingApp(true, new Promise<void>((resolve) => (ready = resolve)));
    const started = launch(app, { showErrorBox: () => undefined }, async () => void app.calls.push('start'), () => undefined, () => undefined, { STUDIO_DATA_DIR: tempDir() });
    expect(app.calls.slice(-2)).toEqual(['requestSingleInstanceLock', 'on second-instance']);
    ready();
    await started;
    expect(app.calls.at(-1)).toBe('start');
    const refused = startingApp(false);
    await launch(refused, { showErrorBox: () => undefined }, async () => undefined, () => undefined, () => undefined, { STUDIO_DATA_DIR: tempDir() });
    expect(refused.calls).not.toContain('on second-instance');
  });

  it('brings the window forward for a launch during start-up once the window is shown, and at once after', () => {
    const done: string[] = [];
    let window: { isMinimized(): boolean; restore(): void; focus(): void } | null = null;
    const focus = new WindowFocus(() => window);
    focus.request();
    focus.request();
    window = { isMinimized: () => true, restore: () => done.push('restore'), focus: () => done.push('focus') };
    // Made but not yet shown: focusing it would show a blank window early.
    focus.request();
    expect(done).toEqual([]);
    focus.shown();
    expect(done).toEqual(['restore', 'focus']);
    focus.request();
    expect(done).toEqual(['restore', 'focus', 'restore', 'focus']);
    window = null;
    focus.request();
    expect(done).toHaveLength(4);
  });

  it('shows a failed start in a dialog that says what to do, then exits and frees the lock', async () => {
    const app = startingApp();
    const shown: [string, string][] = [];
    const logged: string[] = [];
    await startOrExplain(app, { showErrorBox: (t, c) => shown.push([t, c]) }, async () => {
      throw new DatabaseRefused('/data/studio.db was made by a newer version of the studio (schema 9); update the studio to open it.');
    }, (m) => logged.push(m));
    expect(shown).toEqual([['Take Studio could not start', expect.stringMatching(/^\/data\/studio\.db was made by a newer version.*\n\nNothing was sent to a provider/s)]]);
    expect(app.calls).toEqual(['exit 1']);
    expect(logged[0]).toMatch(/could not start: DatabaseRefused|could not start: Error/);
  });

  it('names a database driver built for another runtime and how to get the right one', () => {
    const abi = new Error(`The module '/x/better_sqlite3.node' was compiled against a different Node.js version using NODE_MODULE_VERSION 115. This version of Node.js requires NODE_MODULE_VERSION 145.`);
    expect(explainStartFailure(abi)).toMatch(/^The database driver was built for another runtime \(.*NODE_MODULE_VERSION 115.*\)\. Run "npm start" again/);
  });
});

describe('the database driver for each runtime', () => {
  it('takes the Electron build from resources once packaged and from dist/native in a checkout, checked against the ABI, and its JavaScript from beside the bundle', () => {
    expect(electronBindingDir({ packaged: true, resourcesPath: '/opt/Take Studio/resources', appRoot: '/x', platform: 'linux', arch: 'x64' })).toBe('/opt/Take Studio/resources/native');
    expect(electronBindingDir({ packaged: false, resourcesPath: '/r', appRoot: '/src/studio', platform: 'darwin', arch: 'arm64' })).toBe('/src/studio/dist/native/electron-darwin-arm64');
    const dir = tempDir();
    expect(() => electronBinding(dir, '145')).toThrow(NativeBindingMissing);
    copyFileSync(NODE_BUILD, join(dir, 'better_sqlite3.node'));
    writeFileSync(join(dir, 'abi'), '143\n');
    expect(() => electronBinding(dir, '145')).toThrow('the database driver for this Electron (ABI 145) is not built (the one there is for ABI 143). Run "npm start" again, which builds it, or reinstall Take Studio');
    writeFileSync(join(dir, 'abi'), '145\n');
    expect(electronBinding(dir, '145')).toBe(join(dir, 'better_sqlite3.node'));
    const bundle = tempDir();
    expect(() => electronDriverDir(bundle)).toThrow(`the database driver's JavaScript is not staged in ${join(bundle, 'better-sqlite3')}. Run "npm start" again, which stages it, or reinstall Take Studio`);
    stageNodeDriverJs(join(bundle, 'better-sqlite3'));
    expect(electronDriverDir(bundle)).toBe(join(bundle, 'better-sqlite3'));
  });

  it('opens every connection with the chosen build, and with the JavaScript staged for it when there is one', () => {
    const dir = tempDir();
    try {
      useNativeBinding(join(dir, 'absent.node'));
      expect(() => openDatabase(join(dir, 'a.db'))).toThrow(/absent\.node/);
      copyFileSync(NODE_BUILD, join(dir, 'own.node'));
      useNativeBinding(join(dir, 'own.node'));
      const db = openDatabase(join(dir, 'b.db'));
      expect(db.prepare('SELECT 1 AS one').get()).toEqual({ one: 1 });
      db.close();
      mkdirSync(join(dir, 'staged', 'lib'), { recursive: true });
      writeFileSync(join(dir, 'staged', 'lib', 'index.js'), "throw new Error('the staged JavaScript was loaded');");
      expect(() => useNativeBinding(join(dir, 'own.node'), join(dir, 'staged'))).toThrow('the staged JavaScript was loaded');
    } finally {
      useNativeBinding(NODE_BUILD);
    }
  });

  it('stages the pinned better-sqlite3 for Electron, checked against its integrity, apart from the Node build, and only once', async () => {
    const before = createHash('sha256').update(readFileSync(NODE_BUILD)).digest('hex');
    const tarball = standInDriverPackage();
    const registry = await startRegistry('better-sqlite3', PINNED_DRIVER.version, tarball);
    const dir = nativeCheckout(integrityOf(tarball));
    const env = { ...process.env, npm_config_registry: `${registry.url}/`, npm_config_cache: join(tempDir(), 'npm-cache') };
    // Not execFileSync: the registry answers from this process.
    const run = async () => (await execFileAsync(process.execPath, ['scripts/electron-native.mjs'], { cwd: dir, env, encoding: 'utf8', timeout: 120_000 })).stdout;
    expect(await run()).toBe(`Staged the database driver (better-sqlite3@${PINNED_DRIVER.version}) for Electron ${ELECTRON.version} (ABI ${ELECTRON.abi}) on ${process.platform}-${process.arch}.\n`);
    const binding = electronBinding(electronBindingDir({ packaged: false, resourcesPath: '', appRoot: dir, platform: process.platform, arch: process.arch }), ELECTRON.abi);
    expect(createHash('sha256').update(readFileSync(binding)).digest('hex')).toBe(before);
    try {
      useNativeBinding(binding, electronDriverDir(join(dir, 'dist', 'app')));
      const db = openDatabase(join(dir, 'staged.db'));
      expect(db.prepare('SELECT 1 AS one').get()).toEqual({ one: 1 });
      db.close();
    } finally {
      useNativeBinding(NODE_BUILD);
    }
    const asked = registry.seen.length;
    expect(registry.count('GET', /\.tgz$/)).toBe(1);
    expect(await run()).toBe('');
    expect(registry.seen.length).toBe(asked);
    expect(createHash('sha256').update(readFileSync(NODE_BUILD)).digest('hex')).toBe(before);
  }, 150_000);

  it('says in one line which download failed and how to supply it, exiting 2, and refuses a package that is not the pinned one', () => {
    const dir = nativeCheckout();
    // No retries: npm's own back-off would only slow the test down.
    const env = { ...process.env, npm_config_registry: 'http://127.0.0.1:9/', npm_config_cache: join(tempDir(), 'npm-cache'), npm_config_fetch_retries: '0' };
    const spec = `better-sqlite3@${PINNED_DRIVER.version}`;
    const offline = spawnSync(process.execPath, ['scripts/electron-native.mjs'], { cwd: dir, env, encoding: 'utf8', timeout: 120_000 });
    expect(offline.status).toBe(2);
    expect(offline.stderr).toBe(
      `Could not download ${spec}, the desktop app's database driver (FetchError: request to http://127.0.0.1:9/better-sqlite3 failed, reason: connect ECONNREFUSED 127.0.0.1:9). Connect to your npm registry, or point npm's registry setting at a mirror that has it, or fetch it on another machine (npm pack ${spec}) and set STUDIO_SQLITE_TARBALL to that file.\n`,
    );
    const other = join(tempDir(), `better-sqlite3-${PINNED_DRIVER.version}.tgz`);
    writeFileSync(other, standInDriverPackage());
    const refused = spawnSync(process.execPath, ['scripts/electron-native.mjs'], { cwd: dir, env: { ...env, STUDIO_SQLITE_TARBALL: other }, encoding: 'utf8', timeout: 120_000 });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toBe(`${other} is not ${spec} as pinned: its sha512 differs from package.json's config.electronSqlite.integrity. Nothing was installed.\n`);
    expect(existsSync(join(dir, 'dist', 'native', `electron-${process.platform}-${process.arch}`))).toBe(false);
    expect(existsSync(join(dir, 'dist', 'app', 'better-sqlite3'))).toBe(false);
  }, 150_000);
});

/** node_modules' better-sqlite3 JavaScript, which drives the Node build, where a staged driver's goes. */
function stageNodeDriverJs(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  cpSync(join(ROOT, 'node_modules', 'better-sqlite3', 'lib'), join(dir, 'lib'), { recursive: true });
  copyFileSync(join(ROOT, 'node_modules', 'better-sqlite3', 'package.json'), join(dir, 'package.json'));
}

/**
 * A tarball laid out as better-sqlite3 13's (package/lib, package/prebuilds/<platform>-<arch>.node) at the pinned
 * version, holding what runs under Node here: node_modules' JavaScript and the Node build.
 */
function standInDriverPackage(): Buffer {
  const dir = tempDir();
  stageNodeDriverJs(join(dir, 'package'));
  writeFileSync(join(dir, 'package', 'package.json'), JSON.stringify({ name: 'better-sqlite3', version: PINNED_DRIVER.version, main: 'lib/index.js' }));
  mkdirSync(join(dir, 'package', 'prebuilds'));
  copyFileSync(NODE_BUILD, join(dir, 'package', 'prebuilds', `${process.platform}-${process.arch}.node`));
  execFileSync('tar', ['-czf', 'package.tgz', 'package'], { cwd: dir });
  return readFileSync(join(dir, 'package.tgz'));
}

/** A folder laid out as a checkout for scripts/electron-native.mjs; its package.json pins `integrity` when given. */
function nativeCheckout(integrity?: string): string {
  const dir = tempDir();
  cpSync(join(ROOT, 'scripts'), join(dir, 'scripts'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  if (integrity) pkg.config.electronSqlite.integrity = integrity;
  writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg));
  return dir;
}

describe('quitting', () => {
  /** Electron's app as far as quitting uses it: before-quit with preventDefault, then quit() asks again. */
  function quittingApp() {
    const events = new EventEmitter();
    const app = {
      prevented: 0,
      quits: 0,
      on: (event: 'before-quit', listener: (e: { preventDefault(): void }) => void) => events.on(event, listener),
      quit: () => {
        app.quits++;
        app.ask();
      },
      exit: () => undefined,
      /** One before-quit; true when it was let through. */
      ask: () => {
        let prevented = false;
        events.emit('before-quit', { preventDefault: () => (prevented = true) });
        if (prevented) app.prevented++;
        return !prevented;
      },
    };
    return app;
  }

  it('holds the quit until the engine has stopped, so a request being sent ends with its id saved', async () => {
    const ledger: Ledger = { charged: [] };
    const fake = await startFake(falQueue(ledger, (await realMedia()).png, { submitDelayMs: 1_500 }));
    const dataDir = tempDir();
    writeSettings(dataDir, { engine: { tickMs: 50 }, providers: { fal: { baseUrl: fake.url, key: 'fal-test-key' } } });
    const runtime = await startRuntime(dataDir, { mediaUrl: (id) => `/media/${id}`, log: () => undefined });
    const project = await runtime.studio.projects.ensure('Quit', Date.now());
    const task = await runtime.studio.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'fal', model: FAL_MODEL, input: { prompt: 'a fox' } }, Date.now());
    await until(() => ledger.charged.length === 1, 10_000);

    const app = quittingApp();
    const quit = wireQuit(app, runtime.stop, { limitMs: 15_000, log: () => undefined });
    expect(quit.started()).toBe(false);
    expect(app.ask()).toBe(false);
    expect(quit.started()).toBe(true);
    expect(app.ask()).toBe(false);
    await until(() => app.quits === 1, 15_000);
    expect(app.prevented).toBe(2);

    const studio = await openStudio(dataDir);
    try {
      expect(await studio.tasks.get(task.id)).toMatchObject({ remoteRequestId: 'fal-req-1', status: 'SUBMITTED' });
    } finally {
      await studio.close();
    }
  });

  it('quits anyway when the engine overruns the limit, and says the next start recovers what it left', async () => {
    const app = quittingApp();
    const logged: string[] = [];
    wireQuit(app, () => new Promise(() => undefined), { limitMs: 200, log: (m) => logged.push(m) });
    app.ask();
    await until(() => app.quits === 1, 5_000);
    expect(logged).toEqual(['the engine did not stop within 0.2 s; quitting anyway, and the next start recovers what it left']);
  });

  it('runs the same quit when Windows ends the session or the system shuts down', () => {
    const window = new EventEmitter();
    const power = new EventEmitter();
    let quits = 0;
    let delayed = false;
    quitOnSessionEnd(window, power, { quit: () => quits++ });
    window.emit('session-end');
    power.emit('shutdown', { preventDefault: () => (delayed = true) });
    expect(quits).toBe(2);
    expect(delayed).toBe(true);
  });
});

describe('permissions', () => {
  it('lets the app page take a video full screen, and nothing else, and no other origin anything', () => {
    expect(allowPermission('fullscreen', 'app://studio/index.html')).toBe(true);
    expect(allowPermission('fullscreen', 'https://example.com/')).toBe(false);
    expect(allowPermission('fullscreen', 'app://evil/index.html')).toBe(false);
    expect(allowPermission('fullscreen', undefined)).toBe(false);
    for (const other of ['media', 'geolocation', 'clipboard-read', 'openExternal']) expect(allowPermission(other, 'app://studio/index.html')).toBe(false);
  });

  it("lets the app page say a film is ready, and no other origin", () => {
    expect(allowPermission('notifications', 'app://studio/index.html')).toBe(true);
    expect(allowPermission('notifications', 'https://example.com/')).toBe(false);
    expect(allowPermission('notifications', 'app://evil/index.html')).toBe(false);
    expect(allowPermission('notifications', undefined)).toBe(false);
  });
});

/** The built bundle run under Node, in a folder laid out as a checkout, with the stand-in `electron`. */
async function runBundle(options: { native: boolean; env?: Record<string, string>; before?: (root: string) => void | Promise<void>; running?: (child: ChildProcess) => Promise<void> }) {
  execFileSync(process.execPath, ['scripts/build-app.mjs'], { cwd: ROOT });
  const root = tempDir();
  mkdirSync(join(root, 'dist'));
  cpSync(join(ROOT, 'dist', 'app'), join(root, 'dist', 'app'), { recursive: true });
  for (const shared of ['node_modules', 'migrations', 'resources']) symlinkSync(join(ROOT, shared), join(root, shared));
  symlinkSync(join(ROOT, 'dist', 'renderer'), join(root, 'dist', 'renderer'));
  if (options.native) {
    // The Node build stands in for the Electron one: under Node, the ABI the bundle checks is Node's.
    const native = join(root, 'dist', 'native', `electron-${process.platform}-${process.arch}`);
    mkdirSync(native, { recursive: true });
    copyFileSync(NODE_BUILD, join(native, 'better_sqlite3.node'));
    writeFileSync(join(native, 'abi'), `${process.versions.modules}\n`);
    stageNodeDriverJs(join(root, 'dist', 'app', 'better-sqlite3'));
  }
  await options.before?.(root);
  const child = spawn(process.execPath, ['--import', join(ROOT, 'test', 'fakes', 'electron', 'loader.mjs'), 'dist/app/main.mjs'], {
    cwd: root,
    env: { ...process.env, STUDIO_DATA_DIR: 'data', STUDIO_SIMULATOR_BASE_URL: 'http://127.0.0.1:9', ...options.env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  await options.running?.(child);
  const code = await exited;
  const events = [...stderr.matchAll(/^electron-standin: (\w+) (.*)$/gm)].map((m) => ({ event: m[1]!, detail: JSON.parse(m[2]!) as Record<string, unknown> }));
  return { code, events, root, stderr };
}

describe('the built desktop bundle under Node, with a stand-in electron', () => {
  it('claims its data folder, loads its page through app://, answers IPC, allows only full screen, and quits after the engine stops', async () => {
    const { code, events, root, stderr } = await runBundle({ native: true, env: { STANDIN_QUIT_AFTER_LOAD: '1' } });
    expect(code, stderr).toBe(0);
    const names = events.map((e) => e.event);
    expect(names.slice(0, 4)).toEqual(['registerSchemesAsPrivileged', 'setName', 'setPath', 'requestSingleInstanceLock']);
    expect(events.find((e) => e.event === 'requestSingleInstanceLock')!.detail).toEqual({ userData: join(root, 'data') });
    expect(events.find((e) => e.event === 'loaded')!.detail).toMatchObject({
      url: 'app://studio/index.html',
      status: 200,
      title: 'Take Studio',
      csp: expect.stringContaining("script-src 'self'"),
      ipc: { result: [] },
      fullscreen: true,
      camera: false,
    });
    // The first quit is held while the engine stops; the second passes.
    expect(names.filter((n) => n === 'quit')).toHaveLength(2);
    expect(names.at(-1)).toBe('exit');
    expect(readFileSync(join(root, 'data', 'studio.db')).subarray(0, 15).toString()).toBe('SQLite format 3');
  });

  it('shows a missing database driver in a dialog that says what to do, and exits 1 with no window', async () => {
    const { code, events } = await runBundle({ native: false });
    expect(code).toBe(1);
    expect(events.find((e) => e.event === 'showErrorBox')!.detail).toEqual({
      title: 'Take Studio could not start',
      content: `the database driver for this Electron (ABI ${process.versions.modules}) is not built. Run "npm start" again, which builds it, or reinstall Take Studio`,
    });
    expect(events.some((e) => e.event === 'BrowserWindow')).toBe(false);
  });

  it('explains a data folder that is a file, and exits 1 with no lock asked for and nothing written', async () => {
    const { code, events, root } = await runBundle({ native: true, env: { STUDIO_DATA_DIR: 'data' }, before: (dir) => writeFileSync(join(dir, 'data'), 'x') });
    expect(code).toBe(1);
    expect(events.map((e) => e.event)).toEqual(['registerSchemesAsPrivileged', 'setName', 'showErrorBox', 'exit']);
    expect(events.find((e) => e.event === 'showErrorBox')!.detail.content).toMatch(/^\/.*\/data cannot be used as the data folder \(EEXIST/);
    expect(readFileSync(join(root, 'data'), 'utf8')).toBe('x');
  });

  it('quits through the engine stop on SIGTERM, as Electron does, so a request being sent ends with its id saved', async () => {
    const ledger: Ledger = { charged: [] };
    const fake = await startFake(falQueue(ledger, (await realMedia()).png, { submitDelayMs: 1_500 }));
    let taskId = 0;
    const { code, events, root } = await runBundle({
      native: true,
      before: async (dir) => {
        const dataDir = join(dir, 'data');
        mkdirSync(dataDir);
        writeSettings(dataDir, { engine: { tickMs: 50 }, providers: { fal: { baseUrl: fake.url, key: 'fal-test-key' } } });
        const studio = await openStudio(dataDir);
        const project = await studio.projects.ensure('Quit', Date.now());
        taskId = (await studio.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'fal', model: FAL_MODEL, input: { prompt: 'a fox' } }, Date.now())).id;
        await studio.close();
      },
      running: async (child) => {
        await until(() => ledger.charged.length === 1, 15_000);
        child.kill('SIGTERM');
      },
    });
    expect(code).toBe(0);
    expect(sinceQuit(events)).toEqual(['quit', 'quit', 'exit']);
    const studio = await openStudio(join(root, 'data'));
    try {
      expect(await studio.tasks.get(taskId)).toMatchObject({ remoteRequestId: 'fal-req-1', status: 'SUBMITTED' });
    } finally {
      await studio.close();
    }
  });

  it('lets go of a closed window: a launch while the engine stops reaches no destroyed window, and the app quits', async () => {
    const { code, events, stderr } = await runBundle({ native: true, env: { STANDIN_CLOSE_AFTER_LOAD: '1' } });
    expect(code, stderr).toBe(0);
    expect(events.map((e) => e.event).slice(-4)).toEqual(['closed', 'quit', 'quit', 'exit']);
  });

  it('hears a launch that comes while it starts, and brings the window forward once it is shown', async () => {
    const { code, events, stderr } = await runBundle({ native: true, env: { STANDIN_SECOND_INSTANCE_AT_READY: '1', STANDIN_QUIT_AFTER_LOAD: '1' } });
    expect(code, stderr).toBe(0);
    const names = events.map((e) => e.event);
    expect(names.slice(names.indexOf('requestSingleInstanceLock'), names.indexOf('requestSingleInstanceLock') + 2)).toEqual(['requestSingleInstanceLock', 'listen']);
    expect(events.find((e) => e.event === 'secondInstance')!.detail).toEqual({ listeners: 1 });
    expect(names.indexOf('secondInstance')).toBeLessThan(names.indexOf('BrowserWindow'));
    expect(names.filter((n) => n === 'focus')).toHaveLength(1);
    expect(names.indexOf('focus')).toBeGreaterThan(names.indexOf('show'));
  });

  it('quits before making a window when another run holds the data folder', async () => {
    const { code, events } = await runBundle({ native: true, env: { STANDIN_LOCK_TAKEN: '1' } });
    expect(code).toBe(0);
    expect(events.map((e) => e.event)).toEqual(['registerSchemesAsPrivileged', 'setName', 'setPath', 'requestSingleInstanceLock', 'quit', 'exit']);
  });
});

describe('installing and packaging', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

  it('never downloads Electron at install, and npm start opens the browser where its binary is missing', async () => {
    // npm runs a dependency's install script only where package.json's allowScripts allows it.
    expect(pkg.allowScripts.electron).toBe(false);
    expect(pkg.devDependencies.electron).toBeDefined();
    expect(pkg).toMatchObject({ productName: APP_NAME, main: 'dist/app/main.mjs' });
    const child = spawn(process.execPath, ['scripts/start.mjs', '--port', '0'], {
      cwd: ROOT,
      env: { ...process.env, ELECTRON_SKIP_BINARY_DOWNLOAD: '1', STUDIO_DATA_DIR: tempDir(), STUDIO_SIMULATOR_BASE_URL: 'http://127.0.0.1:9' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      await until(() => /Open http:\/\/127\.0\.0\.1:\d+/.test(out), 60_000);
      expect(out).toContain('The Electron binary is not installed on this machine, so the studio opens in your browser instead.');
    } finally {
      child.kill('SIGTERM');
    }
    // The host it started stops with it, not left running orphaned.
    await exited;
    const url = /Open (http:\/\/127\.0\.0\.1:\d+)/.exec(out)![1]!;
    await expect(fetch(url)).rejects.toThrow();
  }, 90_000);

  it('packages with a configuration electron-builder accepts, item by item', async () => {
    const require = createRequire(join(ROOT, 'package.json'));
    const config = require('js-yaml').load(readFileSync(join(ROOT, 'electron-builder.yml'), 'utf8'));
    const { validateConfiguration } = require('app-builder-lib/out/util/config/config.js');
    const { DebugLogger } = require('builder-util');
    await validateConfiguration(config, new DebugLogger(false));
    expect(pkg.devDependencies['electron-builder']).toBeDefined();
    expect(pkg.scripts.dist).toBe('node scripts/dist.mjs');
    expect(config.appId).toBe(APP_ID);
    expect(config.linux.target).toEqual(['AppImage', 'deb']);
    expect(config.mac.target).toBe('dmg');
    expect(config.win.target).toBe('nsis');
    expect(config.toolsets).toEqual({ appimage: '1.0.3' });
    // Rebuilding in place would replace the Node build; the Electron one is made apart and shipped as a resource.
    expect(config.npmRebuild).toBe(false);
    expect(config.extraResources).toEqual([{ from: 'dist/native/electron-${platform}-${arch}', to: 'native' }]);
    // Only what another program opens from disk; the packaged folder itself is checked in test/packaging.test.ts.
    expect(config.asarUnpack).toEqual([
      'node_modules/@ffmpeg-installer/*/{ffmpeg,ffmpeg.exe}',
      'node_modules/@ffprobe-installer/*/{ffprobe,ffprobe.exe}',
      'node_modules/dejavu-fonts-ttf/ttf/*.ttf',
    ]);
    for (const buildOnly of ['tsx', 'esbuild']) expect(config.files).toContain(`!node_modules/${buildOnly}/**`);
    for (const bundled of ['react', 'react-dom']) {
      expect(pkg.dependencies[bundled]).toBeUndefined();
      expect(pkg.devDependencies[bundled]).toBeDefined();
    }
  });
});
