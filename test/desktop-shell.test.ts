import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { databasePath } from '../main/config/paths.ts';
import { openStudio } from '../main/studio.ts';
import { FAL_MODEL, falQueue, realMedia, type Ledger } from './fakes/providers.ts';
import { send, startFake, type Route } from './fakes/server.ts';
import { buildBundle, layOutCheckout, startBundle as startApp } from './helpers/desktopBundle.ts';
import { alive } from '../main/media/staleParts.ts';
import { writeSettings } from './helpers/processes.ts';
import { rowsOf } from './helpers/sql.ts';
import { tempDir } from './helpers/tmp.ts';
import { until } from './helpers/wait.ts';

/**
 * The desktop shell as a person meets it, through the real bundle (dist/app/main.mjs, its engine in a utility
 * process) under the Electron stand-in: a page that dies, an update downloaded at start and installed at a quit,
 * and the logs and diagnostics a person sends. Each with a paid request in flight at a provider stand-in, which
 * must end with its id saved and one charge.
 */

const ROOT = join(import.meta.dirname, '..');
const VERSION = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;
const PAID_POST = new RegExp(`^/${FAL_MODEL}$`);
const PROMPT = 'a red fox asleep in fresh snow at dawn, soft golden light';

/**
 * fal's queue (test/fakes/providers.ts) whose answer to the paid POST waits until the test lets it go: the request
 * has left and has no answer, its id not yet known, for as long as the test needs. fal bills it when it answers.
 */
function heldFal(ledger: Ledger, png: Awaited<ReturnType<typeof realMedia>>['png']) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const fal = falQueue(ledger, png);
  const route: Route = async (req, res) => {
    if (req.method === 'POST' && PAID_POST.test(req.path)) await released;
    return fal(req, res);
  };
  return { route, release };
}

/** `root` laid out as a checkout with the built bundle, its data folder with `settings` and, given a prompt, one fal image enqueued. */
async function checkout(root: string, settings: Record<string, unknown>, prompt?: string) {
  layOutCheckout(root);
  // The app's package.json, where a checkout and the packaged archive have it: diagnostics reads the version there.
  copyFileSync(join(ROOT, 'package.json'), join(root, 'package.json'));
  const dataDir = join(root, 'data');
  mkdirSync(dataDir);
  writeSettings(dataDir, { engine: { tickMs: 50 }, ...settings });
  const taskId = prompt === undefined ? null : await enqueueImage(dataDir, prompt);
  return { dataDir, taskId };
}

async function enqueueImage(dataDir: string, prompt: string): Promise<number> {
  const studio = await openStudio(dataDir);
  try {
    const project = await studio.projects.ensure('Shell', Date.now());
    return (await studio.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'fal', model: FAL_MODEL, input: { prompt } }, Date.now())).id;
  } finally {
    await studio.close();
  }
}

async function taskOf(dataDir: string, taskId: number) {
  const studio = await openStudio(dataDir);
  try {
    return await studio.tasks.get(taskId);
  } finally {
    await studio.close();
  }
}

/** The bundle run as test/helpers/desktopBundle.ts runs it, SIGKILLed when the test ends if it is still running. */
function startBundle(root: string, env: Record<string, string> = {}) {
  const app = startApp(root, { FAL_KEY: '', ...env });
  onTestFinished(() => {
    if (app.child.exitCode === null && app.child.signalCode === null) app.child.kill('SIGKILL');
  });
  return app;
}

/** Writes `source` as an ES module the stand-in runs as the page (STANDIN_DRIVE), and returns its path. */
function pageScript(source: string): string {
  const file = join(tempDir(), 'page.mjs');
  writeFileSync(file, source);
  return file;
}


let png: Awaited<ReturnType<typeof realMedia>>['png'];

beforeAll(async () => {
  buildBundle();
  png = (await realMedia()).png;
}, 60_000);

describe('the window page dies while a paid request is in flight', () => {
  it('is loaded again and the person told, while the engine runs on: the request keeps its id and is charged once', async () => {
    const ledger: Ledger = { charged: [] };
    const fal = heldFal(ledger, png);
    const fake = await startFake(fal.route);
    const root = tempDir();
    const { dataDir, taskId } = await checkout(root, { providers: { fal: { baseUrl: fake.url, key: 'fal-test-key' } } }, 'a fox');
    const app = startBundle(root, { STANDIN_RENDERER_GONE_ON: 'SIGUSR2' });
    await app.waitFor('loaded');
    await until(() => fake.count('POST', PAID_POST) === 1, 15_000);

    const before = app.events.length;
    app.child.kill('SIGUSR2');
    const told = await app.waitFor('showMessageBox', undefined, 10_000, before);
    expect(told.detail).toMatchObject({ type: 'warning', message: "Take Studio's window stopped and was opened again", attached: true });
    expect(told.detail.detail).toMatch(/^Its page stopped unexpectedly\. The studio itself kept running, so paid requests in flight go on and nothing is bought twice\./);
    const crashEvents = ['loaded', 'renderProcessGone', 'reload', 'showMessageBox', 'showErrorBox'];
    expect(app.events.slice(before).map((e) => e.event).filter((e) => crashEvents.includes(e))).toEqual(['renderProcessGone', 'reload', 'showMessageBox']);
    // Told while the request was still unanswered: sent, its id not yet known.
    expect(rowsOf(dataDir, `SELECT remote_request_id FROM tasks WHERE id = ${taskId}`)).toEqual([{ remote_request_id: null }]);

    fal.release();
    await until(() => rowsOf(dataDir, `SELECT status FROM tasks WHERE id = ${taskId}`)[0]!.status === 'SUCCEEDED', 20_000);
    app.child.kill('SIGTERM');
    expect(await app.exited, app.stderr()).toBe(0);
    expect(await taskOf(dataDir, taskId!)).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: 'fal-req-1' });
    expect(ledger.charged).toEqual(['fal-req-1']);
    expect(fake.count('POST', PAID_POST)).toBe(1);
    // The page's crash left the engine's process alone.
    expect(app.events.filter((e) => e.event === 'utilityProcess')).toHaveLength(1);
    expect(readFileSync(join(dataDir, 'logs', 'desktop.log'), 'utf8')).toMatch(/ERROR desktop\[\d+\] the window's page stopped \(crashed, exit code 139\); loading it again\n/);
  }, 30_000);
});

// electron-updater's channel file on Linux: latest-linux.yml on x64, with the arch otherwise (providers/Provider.js).
const CHANNEL = `latest-linux${process.arch === 'x64' ? '' : `-${process.arch}`}.yml`;
const NEWER = VERSION.replace(/^(\d+)\./, (_, major: string) => `${Number(major) + 1}.`);
const ARTIFACT = `Take-Studio-${NEWER}.AppImage`;
/** main.ts leaves wireUpdates' delay at its default: the check starts this long after the engine is open. */
const CHECK_DELAY_MS = 10_000;

/**
 * A packaged app run from an AppImage: a resources folder with app-update.yml naming a generic feed on 127.0.0.1 and
 * the database driver where a packaged app keeps it, and that feed serving a newer version as electron-builder
 * publishes it (the channel file with the artifact's base64 sha512 and size; the artifact). The artifact is a script
 * that electron-updater runs once it has put it in the AppImage's place (AppImageUpdater.doInstall): it writes to
 * `journal` whether the engine's process (its pid in `enginePid`) was still running then, and the request id the
 * task's row held.
 */
async function packagedRelease(dataDir: string, taskId: number | null) {
  const dir = tempDir();
  const journal = join(dir, 'journal');
  const enginePid = join(dir, 'engine.pid');
  writeFileSync(journal, '');
  const readId =
    `const D = require(${JSON.stringify(join(ROOT, 'node_modules', 'better-sqlite3'))}); ` +
    `const row = new D(process.argv[1], { readonly: true }).prepare('SELECT remote_request_id AS id FROM tasks WHERE id = ?').get(Number(process.argv[2])); ` +
    `console.log(row?.id ?? 'none')`;
  const artifact = Buffer.from(
    [
      '#!/bin/sh',
      `if kill -0 "$(cat '${enginePid}')" 2>/dev/null; then engine=running; else engine=stopped; fi`,
      `id=$('${process.execPath}' -e "${readId.replace(/"/g, '\\"')}" '${databasePath(dataDir)}' ${taskId ?? 0})`,
      `echo "installed engine=$engine request=$id" >> '${journal}'`,
      '',
    ].join('\n'),
  );
  const sha512 = createHash('sha512').update(artifact).digest('base64');
  // As electron-builder writes it (app-builder-lib out/publish/updateInfoBuilder.js): files, then path and sha512 of the first.
  const channel = [`version: ${NEWER}`, 'files:', `  - url: ${ARTIFACT}`, `    sha512: ${sha512}`, `    size: ${artifact.length}`, `path: ${ARTIFACT}`, `sha512: ${sha512}`, `releaseDate: '${new Date().toISOString()}'`, ''].join('\n');
  const feed = await startFake((req, res) => {
    const path = new URL(req.path, 'http://feed').pathname;
    if (path === `/${CHANNEL}`) return send(res, 200, channel);
    if (path === `/${ARTIFACT}`) return send(res, 200, artifact, { 'content-length': String(artifact.length) });
    return send(res, 404, 'not found');
  });
  const resources = join(dir, 'resources');
  mkdirSync(join(resources, 'native'), { recursive: true });
  writeFileSync(join(resources, 'app-update.yml'), `provider: generic\nurl: ${feed.url}/\nupdaterCacheDirName: take-studio-updater\n`);
  // Under Node the ABI the bundle checks is Node's, so Node's build stands where electron-builder puts Electron's.
  copyFileSync(join(ROOT, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node'), join(resources, 'native', 'better_sqlite3.node'));
  writeFileSync(join(resources, 'native', 'abi'), `${process.versions.modules}\n`);
  const appImage = join(dir, 'Take-Studio.AppImage');
  writeFileSync(appImage, 'the running version', { mode: 0o755 });
  const env = { STANDIN_PACKAGED: '1', STANDIN_RESOURCES_PATH: resources, APPIMAGE: appImage, XDG_CACHE_HOME: join(dir, 'cache') };
  return { dir, journal, enginePid, artifact, feed, appImage, env, pending: join(dir, 'cache', 'take-studio-updater', 'pending', ARTIFACT) };
}

const journalOf = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean);

describe('updates in the packaged app', () => {
  it('checks at start and downloads; a quit with a paid request in flight installs only after the engine stopped and the id was saved', async () => {
    const ledger: Ledger = { charged: [] };
    const fal = heldFal(ledger, png);
    const fake = await startFake(fal.route);
    const root = tempDir();
    const { dataDir, taskId } = await checkout(root, { providers: { fal: { baseUrl: fake.url, key: 'fal-test-key' } } }, 'a fox');
    const release = await packagedRelease(dataDir, taskId);
    const app = startBundle(root, release.env);
    const engine = Number((await app.waitFor('utilityProcess')).detail.pid);
    writeFileSync(release.enginePid, String(engine));
    await until(() => fake.count('POST', PAID_POST) === 1, 15_000);

    const ready = `updates: Take Studio ${NEWER} is ready. It installs when you quit.`;
    const desktopLog = join(dataDir, 'logs', 'desktop.log');
    await until(() => existsSync(desktopLog) && readFileSync(desktopLog, 'utf8').includes(ready), CHECK_DELAY_MS + 10_000);
    expect(release.feed.seen.map((r) => new URL(r.path, 'http://feed').pathname)).toEqual(expect.arrayContaining([`/${CHANNEL}`, `/${ARTIFACT}`]));
    expect(app.events.filter((e) => e.event === 'netRequest').length).toBeGreaterThanOrEqual(2);
    expect(readFileSync(release.pending)).toEqual(release.artifact);

    // The quit waits for the engine, which lets the request in flight finish: nothing is installed meanwhile.
    app.child.kill('SIGTERM');
    await app.waitFor('quit');
    await new Promise((r) => setTimeout(r, 1_000));
    expect(app.child.exitCode).toBeNull();
    expect(alive(engine)).toBe(true);
    expect(readFileSync(release.appImage, 'utf8')).toBe('the running version');
    expect(journalOf(release.journal)).toEqual([]);

    fal.release();
    expect(await app.exited, app.stderr()).toBe(0);
    await until(() => journalOf(release.journal).length > 0, 10_000);
    expect(journalOf(release.journal)).toEqual(['installed engine=stopped request=fal-req-1']);
    expect(readFileSync(release.appImage)).toEqual(release.artifact);
    expect(await taskOf(dataDir, taskId!)).toMatchObject({ status: 'SUBMITTED', remoteRequestId: 'fal-req-1' });
    expect(ledger.charged).toEqual(['fal-req-1']);
    expect(fake.count('POST', PAID_POST)).toBe(1);
  }, 30_000);

  it('with updates.checkAtStart false in settings.json, asks the feed nothing, past the time it would have', async () => {
    const root = tempDir();
    const { dataDir } = await checkout(root, { updates: { checkAtStart: false } });
    const release = await packagedRelease(dataDir, null);
    const app = startBundle(root, release.env);
    await app.waitFor('loaded');
    await new Promise((r) => setTimeout(r, CHECK_DELAY_MS + 1_500));
    app.child.kill('SIGTERM');
    expect(await app.exited, app.stderr()).toBe(0);
    expect(release.feed.seen).toEqual([]);
    expect(app.events.filter((e) => e.event === 'netRequest')).toEqual([]);
    expect(readFileSync(join(dataDir, 'logs', 'desktop.log'), 'utf8')).toContain('updates: not looking for one, as updates are off in Settings');
    expect(readFileSync(release.appImage, 'utf8')).toBe('the running version');
  }, 30_000);
});

describe('the logs and diagnostics a person sends', () => {
  it('desktop.log and engine.log under the logs path hold no key set in Settings and no prompt; diagnostics gives versions and folders, no key', async () => {
    const KEY = 'fal-page-key-7Q2w9Zx4';
    const ledger: Ledger = { charged: [] };
    const falRoute = falQueue(ledger, png);
    // fal's status stream fails with a detail quoting the prompt and the key it was sent with, which the engine logs
    // ("task N: status stream: …; polling instead") before it polls and collects the result as usual.
    const fake = await startFake((req, res) =>
      req.path.includes('/status/stream')
        ? send(res, 500, { detail: `the runner failed on '${PROMPT}' for ${String(req.headers.authorization).replace(/^Key /, '')}: out of memory` })
        : falRoute(req, res),
    );
    const root = tempDir();
    const { dataDir } = await checkout(root, { providers: { fal: { baseUrl: fake.url } } });

    // First run: the key is typed into Settings, through the IPC the page uses.
    const typing = startBundle(root, {
      STANDIN_DRIVE: pageScript(`
        export default async function ({ invoke, report }) {
          const saved = await invoke('studio', 'saveSettings', [{ key: { provider: 'fal', value: ${JSON.stringify(KEY)} } }]);
          report('answer', { fal: saved.result?.keys.fal ?? saved.error });
          process.kill(process.pid, 'SIGTERM');
        }
      `),
    });
    expect(await typing.exited, typing.stderr()).toBe(0);
    expect(typing.events.filter((e) => e.event === 'answer').map((e) => e.detail)).toEqual([{ fal: 'keychain' }]);

    // Second run: a paid image with that key, then Copy diagnostics once it has succeeded.
    const taskId = await enqueueImage(dataDir, PROMPT);
    const app = startBundle(root, {
      STANDIN_DRIVE: pageScript(`
        export default async function ({ invoke, report }) {
          for (;;) {
            const page = await invoke('studio', 'listTasks', ['Shell', 0, 10]);
            if (page.result?.tasks.every((t) => t.status === 'SUCCEEDED')) break;
            await new Promise((r) => setTimeout(r, 100));
          }
          report('diagnostics', await invoke('studio', 'diagnostics', []));
          process.kill(process.pid, 'SIGTERM');
        }
      `),
    });
    const { detail } = await app.waitFor('diagnostics', undefined, 20_000);
    expect(await app.exited, app.stderr()).toBe(0);
    expect(await taskOf(dataDir, taskId)).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: 'fal-req-1' });
    expect(ledger.charged).toEqual(['fal-req-1']);
    // The key did reach fal, and fal's words with it reached the engine's log, cut.
    expect(fake.seen.find((r) => PAID_POST.test(r.path))!.headers.authorization).toBe(`Key ${KEY}`);

    const logs = join(dataDir, 'logs');
    const desktop = readFileSync(join(logs, 'desktop.log'), 'utf8');
    const engine = readFileSync(join(logs, 'engine.log'), 'utf8');
    expect(engine).toMatch(new RegExp(`task ${taskId}: status stream: fal had a problem on its side \\(HTTP 500: the runner failed on '\\[prompt\\]' for \\[key\\]: out of memory\\); polling instead`));
    for (const [name, text] of [
      ['desktop.log', desktop],
      ['engine.log', engine],
      ['the first run at the terminal', typing.stderr()],
      ['the second run at the terminal', app.stderr()],
    ] as const) {
      expect(text, name).not.toContain(KEY);
      expect(text, name).not.toContain('red fox asleep');
    }

    const text = detail.result as string;
    expect(detail.error).toBeUndefined();
    expect(text).toMatch(/^Take Studio diagnostics, \d{4}-\d\d-\d\dT[\d:.]+Z\n/);
    expect(text).toContain(`Take Studio: ${VERSION}\n`);
    expect(text).toContain(`Node: ${process.versions.node}\n`);
    expect(text).toContain(`V8: ${process.versions.v8}\n`);
    expect(text).toContain(`Data folder: ${dataDir}\n`);
    expect(text).toContain(`Logs: ${logs}\n`);
    expect(text).toContain('Running: running\n');
    expect(text).toMatch(/the runner failed on '\[prompt\]' for \[key\]/);
    expect(text).not.toContain(KEY);
    expect(text).not.toContain('red fox asleep');
    expect(existsSync(join(dataDir, 'keys.json'))).toBe(true);
  }, 30_000);
});
