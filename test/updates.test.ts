import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readyMessage, updateCheck } from '../app/updatePolicy.ts';
import { parseSettings, SettingsError } from '../main/config/settings.ts';
import { checkSettingsPatch, PatchRefused } from '../main/api/settingsPatch.ts';
import { startFake, send } from './fakes/server.ts';
import { writeSettings } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';
import { until } from './helpers/wait.ts';

const ROOT = join(import.meta.dirname, '..');
const VERSION = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;
const NEWER = VERSION.replace(/^(\d+)\./, (_, major: string) => `${Number(major) + 1}.`);
// electron-updater's channel file on Linux: latest-linux.yml on x64, with the arch otherwise (providers/Provider.js).
const CHANNEL = `latest-linux${process.arch === 'x64' ? '' : `-${process.arch}`}.yml`;
const ARTIFACT = `Take-Studio-${NEWER}.AppImage`;
/** scripts/publishConfig.mjs, plain JavaScript as the scripts are, imported by its address to type it here. */
const publishScript = (await import(new URL('../scripts/publishConfig.mjs', import.meta.url).href)) as {
  feedPublish(env: Record<string, string | undefined>): unknown[];
  default(request: { projectDir: string }): { publish: unknown[] };
};

/**
 * A packaged Linux app run from an AppImage, its app-update.yml naming a generic feed, and that feed on
 * 127.0.0.1 serving a newer version as electron-builder publishes it: the channel file (sha512 in base64 of
 * the served file, its size) and the artifact. The artifact is a script that, run as electron-updater runs
 * an AppImage it installs, writes "installed" to the journal the engine's stop also writes to.
 */
async function release(options: { channel?: boolean; sha512?: string; published?: () => boolean; artifactAfter?: Promise<void> } = {}) {
  const dir = tempDir();
  const journal = join(dir, 'journal');
  writeFileSync(journal, '');
  mkdirSync(join(dir, 'data'));
  const artifact = Buffer.from(`#!/bin/sh\necho "installed silent=$APPIMAGE_SILENT_INSTALL exitAfter=$APPIMAGE_EXIT_AFTER_INSTALL" >> '${journal}'\n`);
  const sha512 = options.sha512 ?? createHash('sha512').update(artifact).digest('base64');
  // As electron-builder writes it (app-builder-lib out/publish/updateInfoBuilder.js): files, then path and sha512 of the first.
  const channel = (version: string) => [
    `version: ${version}`,
    'files:',
    `  - url: ${ARTIFACT}`,
    `    sha512: ${sha512}`,
    `    size: ${artifact.length}`,
    `path: ${ARTIFACT}`,
    `sha512: ${sha512}`,
    `releaseDate: '${new Date().toISOString()}'`,
    '',
  ].join('\n');
  const feed = await startFake(async (req, res) => {
    const path = new URL(req.path, 'http://feed').pathname;
    if (path === `/${ARTIFACT}`) await options.artifactAfter;
    // Until the newer version is published, the feed names the running one.
    if (path === `/${CHANNEL}` && options.channel !== false) return send(res, 200, channel((options.published?.() ?? true) ? NEWER : VERSION));
    if (path === `/${ARTIFACT}`) return send(res, 200, artifact, { 'content-length': String(artifact.length) });
    return send(res, 404, 'not found');
  });
  return { dir, journal, artifact, feed };
}

/**
 * The cut-down main process (test/helpers/updatingApp.ts) bundled as scripts/build-app.mjs bundles the app,
 * packages left to Node: electron-updater loads as CommonJS and its require('electron') meets the stand-in.
 */
async function bundleApp(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'studio-updating-app-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  const outfile = join(dir, 'updatingApp.mjs');
  await build({ entryPoints: [join(ROOT, 'test', 'helpers', 'updatingApp.ts')], outfile, bundle: true, platform: 'node', format: 'esm', packages: 'external', logLevel: 'warning' });
  return outfile;
}

/** That process with the stand-in electron, packaged, run as an AppImage. */
function startApp(dir: string, feedUrl: string, env: Record<string, string> = {}) {
  const resources = join(dir, 'resources');
  mkdirSync(resources, { recursive: true });
  writeFileSync(join(resources, 'app-update.yml'), `provider: generic\nurl: ${feedUrl}\nupdaterCacheDirName: studio-updater\n`);
  const appImage = join(dir, 'Take-Studio.AppImage');
  writeFileSync(appImage, 'the running version', { mode: 0o755 });
  const child = spawn(process.execPath, ['--import', join(ROOT, 'test', 'fakes', 'electron', 'loader.mjs'), bundled], {
    cwd: ROOT,
    env: {
      ...process.env,
      STANDIN_PACKAGED: '1',
      STANDIN_RESOURCES_PATH: resources,
      APPIMAGE: appImage,
      XDG_CACHE_HOME: join(dir, 'cache'),
      UPDATE_TEST_DATA: join(dir, 'data'),
      UPDATE_TEST_JOURNAL: join(dir, 'journal'),
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const lines = (what: string) => [...stderr.matchAll(new RegExp(`^updating-app: ${what} (.*)$`, 'gm'))].map((m) => JSON.parse(m[1]!) as unknown);
  return {
    child,
    appImage,
    exited,
    stderr: () => stderr,
    logs: () => lines('log') as string[],
    announced: () => lines('announce'),
    standIn: (event: string) => stderr.split('\n').filter((l) => l.startsWith(`electron-standin: ${event} `)),
  };
}

const downloaded = (app: ReturnType<typeof startApp>) => until(() => app.announced().length > 0, 30_000);
const readJournal = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean);

let bundled = '';

describe('updates through electron-updater, a feed on 127.0.0.1 and the Electron stand-in', () => {
  beforeAll(async () => {
    bundled = await bundleApp();
  });

  it('checks the feed at start, downloads and verifies the newer version, announces it once, and installs nothing before quit', async () => {
    const { dir, journal, artifact, feed } = await release();
    const app = startApp(dir, `${feed.url}/`);
    await downloaded(app);
    expect(feed.seen.map((r) => new URL(r.path, 'http://feed').pathname)).toEqual(expect.arrayContaining([`/${CHANNEL}`, `/${ARTIFACT}`]));
    expect(app.standIn('netRequest').length).toBeGreaterThanOrEqual(2);
    expect(app.announced()).toEqual([readyMessage(NEWER)]);
    expect(app.logs()).toContain(`updates: Take Studio ${NEWER} is ready. It installs when you quit.`);
    expect(readyMessage(NEWER)).toEqual({ title: `Take Studio ${NEWER} is ready`, body: 'It installs when you quit.' });
    // Verified against the channel's sha512 and kept in the updater's cache under the name the feed gave it.
    expect(app.logs()).toContain(`updates: New version ${NEWER} has been downloaded to ${join(dir, 'cache', 'studio-updater', 'pending', ARTIFACT)}`);
    expect(readFileSync(join(dir, 'cache', 'studio-updater', 'pending', ARTIFACT))).toEqual(artifact);
    await new Promise((r) => setTimeout(r, 300));
    expect(readJournal(journal)).toEqual([]);
    expect(readFileSync(app.appImage, 'utf8')).toBe('the running version');
    app.child.kill('SIGKILL');
    await app.exited;
  }, 60_000);

  it('looks again while it runs (hourly; every 300 ms here): a version published later is downloaded and announced once, and no check follows', async () => {
    let published = false;
    const { dir, feed } = await release({ published: () => published });
    const app = startApp(dir, `${feed.url}/`, { UPDATE_TEST_INTERVAL_MS: '300' });
    const checks = () => feed.count('GET', new RegExp(CHANNEL.replace(/\./g, '\\.')));
    await until(() => checks() >= 3, 20_000);
    expect(app.announced()).toEqual([]);
    published = true;
    await downloaded(app);
    const then = checks();
    await new Promise((r) => setTimeout(r, 1_500));
    expect(checks()).toBe(then);
    expect(app.announced()).toEqual([readyMessage(NEWER)]);
    app.child.kill('SIGKILL');
    await app.exited;
  }, 60_000);

  it('switched off while it runs, looks no more, and looks again once switched back on', async () => {
    const { dir, feed } = await release({ published: () => false });
    const app = startApp(dir, `${feed.url}/`, { UPDATE_TEST_INTERVAL_MS: '300' });
    const checks = () => feed.count('GET', new RegExp(CHANNEL.replace(/\./g, '\\.')));
    await until(() => checks() >= 2, 20_000);
    writeSettings(join(dir, 'data'), { updates: { checkAtStart: false } });
    // A check under way when the switch moved may still reach the feed.
    await new Promise((r) => setTimeout(r, 600));
    const off = checks();
    await new Promise((r) => setTimeout(r, 1_500));
    expect(checks()).toBe(off);
    writeSettings(join(dir, 'data'), { updates: { checkAtStart: true } });
    await until(() => checks() > off, 10_000);
    app.child.kill('SIGKILL');
    await app.exited;
  }, 60_000);

  it('switched off while a download is under way: the download ends, but is neither announced nor installed', async () => {
    let serve = () => undefined as void;
    const { dir, journal, feed } = await release({ artifactAfter: new Promise<void>((resolve) => (serve = resolve)) });
    const app = startApp(dir, `${feed.url}/`);
    await until(() => feed.count('GET', new RegExp(ARTIFACT.replace(/\./g, '\\.'))) === 1, 20_000);
    writeSettings(join(dir, 'data'), { updates: { checkAtStart: false } });
    serve();
    await until(() => app.logs().some((l) => l.startsWith(`updates: New version ${NEWER} has been downloaded`)), 20_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(app.announced()).toEqual([]);
    app.child.kill('SIGTERM');
    expect(await app.exited).toBe(0);
    expect(readFileSync(app.appImage, 'utf8')).toBe('the running version');
    expect(readJournal(journal)).toEqual(['engine stopped']);
  }, 60_000);

  it('at quit, while the engine is still stopping (a paid request in flight), installs only once its stop has resolved, silently', async () => {
    const { dir, journal, artifact, feed } = await release();
    const app = startApp(dir, `${feed.url}/`, { UPDATE_TEST_STOP_MS: '3000' });
    await downloaded(app);
    // SIGTERM quits as Electron does (the stand-in asks app.quit()); wireQuit holds it while the engine stops.
    app.child.kill('SIGTERM');
    await until(() => app.standIn('quit').length === 1, 5_000);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(readJournal(journal)).toEqual([]);
    expect(await app.exited).toBe(0);
    expect(readJournal(journal)).toEqual(['engine stopped', 'installed silent=true exitAfter=true']);
    // The AppImage it runs from is replaced by the new one (AppImageUpdater.doInstall), for the next start.
    expect(readFileSync(app.appImage)).toEqual(artifact);
    expect(app.standIn('quit')).toHaveLength(2);
  }, 60_000);

  it('with the switch off in Settings, asks the feed nothing and installs nothing', async () => {
    const { dir, journal, feed } = await release();
    writeSettings(join(dir, 'data'), { updates: { checkAtStart: false } });
    const app = startApp(dir, `${feed.url}/`);
    await until(() => app.logs().length > 0, 10_000);
    await new Promise((r) => setTimeout(r, 1_000));
    app.child.kill('SIGTERM');
    expect(await app.exited).toBe(0);
    expect(feed.seen).toEqual([]);
    expect(app.standIn('netRequest')).toEqual([]);
    expect(app.logs()).toContain('updates: not looking for one, as updates are off in Settings');
    expect(readJournal(journal)).toEqual(['engine stopped']);
  }, 30_000);

  it('leaves the update for a later quit when the engine overruns the quit limit, its stop fails, the session ends, or the switch was turned off', async () => {
    for (const [env, quit] of [
      [{ UPDATE_TEST_STOP_MS: '3000', UPDATE_TEST_LIMIT_MS: '300' }, 'SIGTERM'],
      [{ UPDATE_TEST_STOP: 'fails' }, 'SIGTERM'],
      [{}, 'SIGUSR2'],
      [{}, 'switched off'],
    ] as const) {
      const { dir, feed } = await release();
      const app = startApp(dir, `${feed.url}/`, env);
      await downloaded(app);
      if (quit === 'switched off') writeSettings(join(dir, 'data'), { updates: { checkAtStart: false } });
      app.child.kill(quit === 'switched off' ? 'SIGTERM' : quit);
      expect(await app.exited).toBe(0);
      expect(readFileSync(app.appImage, 'utf8'), JSON.stringify(env)).toBe('the running version');
      expect(app.logs()).toContain('updates: Update will not be installed on quit because autoInstallOnAppQuit is set to false.');
    }
  }, 90_000);

  it('logs a feed that is offline, missing, or serving a file whose sha512 does not match, and goes on running', async () => {
    const missing = await release({ channel: false });
    const corrupt = await release({ sha512: createHash('sha512').update('another file').digest('base64') });
    const offline = await release();
    for (const [name, dir, url, why] of [
      ['missing', missing.dir, `${missing.feed.url}/`, /^updates: none this time \(Cannot find channel "latest-linux.*\.yml" update info: HttpError: 404/],
      ['corrupt', corrupt.dir, `${corrupt.feed.url}/`, /^updates: none this time \(sha512 checksum mismatch, expected /],
      ['offline', offline.dir, 'http://127.0.0.1:9/', /^updates: none this time \(connect ECONNREFUSED 127\.0\.0\.1:9\)/],
    ] as const) {
      const app = startApp(dir, url);
      await until(() => app.logs().some((l) => l.startsWith('updates: none this time')), 30_000).catch(() => expect.fail(`${name}: ${app.stderr()}`));
      expect(app.logs().find((l) => l.startsWith('updates: none this time')), name).toMatch(why);
      expect(app.announced(), name).toEqual([]);
      app.child.kill('SIGTERM');
      expect(await app.exited, name).toBe(0);
      expect(readFileSync(app.appImage, 'utf8'), name).toBe('the running version');
    }
    expect(corrupt.feed.count('GET', new RegExp(ARTIFACT))).toBeGreaterThan(0);
  }, 90_000);
});

describe('whether this copy looks for updates', () => {
  const packagedAppImage = { switchOn: true, packaged: true, platform: 'linux' as const, appImage: '/opt/Take-Studio.AppImage' };

  it('looks in a packaged app with the switch on, on Windows, macOS and a Linux AppImage', () => {
    expect(updateCheck(packagedAppImage)).toEqual({ check: true });
    expect(updateCheck({ ...packagedAppImage, platform: 'win32', appImage: undefined })).toEqual({ check: true });
    expect(updateCheck({ ...packagedAppImage, platform: 'darwin', appImage: undefined })).toEqual({ check: true });
  });

  it('does not with the switch off, from source, or in a deb, and says why', () => {
    expect(updateCheck({ ...packagedAppImage, switchOn: false })).toEqual({ check: false, why: 'updates are off in Settings' });
    expect(updateCheck({ ...packagedAppImage, packaged: false })).toEqual({ check: false, why: 'this copy runs from source and is updated with it' });
    expect(updateCheck({ ...packagedAppImage, appImage: undefined })).toEqual({ check: false, why: 'this copy was installed by a package (deb), which the system updates' });
  });
});

describe('the Settings switch', () => {
  it('is on by default, and a wrong value in settings.json is named', () => {
    expect(parseSettings({}).updates).toEqual({ checkAtStart: true });
    expect(parseSettings({ updates: { checkAtStart: false } }).updates).toEqual({ checkAtStart: false });
    expect(() => parseSettings({ updates: { checkAtStart: 'no' } })).toThrow(new SettingsError('settings: updates.checkAtStart must be true or false, not "no"'));
    expect(() => parseSettings({ updates: { check: false } })).toThrow(new SettingsError('settings: updates has no field "check"; it takes only checkAtStart'));
    expect(() => parseSettings({ updates: true })).toThrow(new SettingsError('settings: updates must be an object like {"checkAtStart": true}'));
  });

  it('is changed through the API as a true or false', () => {
    expect(checkSettingsPatch({ checkUpdatesAtStart: false })).toEqual({ checkUpdatesAtStart: false });
    expect(() => checkSettingsPatch({ checkUpdatesAtStart: 'off' })).toThrow(new PatchRefused('checkUpdatesAtStart must be true or false'));
  });
});

describe('where a release updates from', () => {
  const require = createRequire(join(ROOT, 'package.json'));
  const { Packager } = require('app-builder-lib');
  /** The configuration electron-builder builds with, loaded and checked as `npm run dist` has it load scripts/publishConfig.mjs. */
  const loaded = async (url: string | undefined) => {
    const before = process.env.STUDIO_UPDATE_URL;
    if (url === undefined) delete process.env.STUDIO_UPDATE_URL;
    else process.env.STUDIO_UPDATE_URL = url;
    try {
      const packager = new Packager({ projectDir: ROOT, config: { extends: 'scripts/publishConfig.mjs', electronDownload: { cache: '/elsewhere' } } });
      await packager.validateConfig();
      return packager.config;
    } finally {
      if (before === undefined) delete process.env.STUDIO_UPDATE_URL;
      else process.env.STUDIO_UPDATE_URL = before;
    }
  };

  it('puts the generic feed the builder names first, so app-update.yml points at it, with GitHub releases after', async () => {
    const config = await loaded('https://updates.example.org/studio/');
    expect(config.publish).toEqual([{ provider: 'generic', url: 'https://updates.example.org/studio/' }, { provider: 'github' }]);
    // The rest is electron-builder.yml's, with dist's own options merged over it.
    expect(config.appId).toBe('app.takestudio.desktop');
    expect(config.electronDownload).toEqual({ cache: '/elsewhere' });
  });

  it('builds from GitHub releases alone when no feed is named', async () => {
    expect((await loaded(undefined)).publish).toEqual([{ provider: 'github' }]);
    expect((await loaded('')).publish).toEqual([{ provider: 'github' }]);
    expect(publishScript.default({ projectDir: ROOT })).toMatchObject({ publish: [{ provider: 'github' }] });
  });

  it('refuses a feed that is not https, which anyone on the way could answer with an installer of their own', () => {
    expect(() => publishScript.feedPublish({ STUDIO_UPDATE_URL: 'http://updates.example.org/' })).toThrow(
      'STUDIO_UPDATE_URL must be the https:// address of the folder holding the latest*.yml files and the installers (http:// only on 127.0.0.1 or localhost, for a test), not "http://updates.example.org/"',
    );
    expect(() => publishScript.feedPublish({ STUDIO_UPDATE_URL: 'updates.example.org' })).toThrow(/must be the https:\/\/ address/);
    expect(publishScript.feedPublish({ STUDIO_UPDATE_URL: 'http://127.0.0.1:8080/feed/' })).toEqual([{ provider: 'generic', url: 'http://127.0.0.1:8080/feed/' }]);
  });
});
