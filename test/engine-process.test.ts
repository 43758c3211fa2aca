import { EventEmitter } from 'node:events';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { keySnapshot, relayedKeyStore } from '../app/engineKeys.ts';
import { ENGINE_DOWN, mayRestart, PendingCalls, QUITTING, STOPPED_MIDWAY, type FromEngine, type ToEngine } from '../app/engineProtocol.ts';
import { EngineRelay, type EngineRelayDeps } from '../app/engineRelay.ts';
import { safeKeyStore, type Encryptor } from '../app/keys.ts';
import { loadSettings } from '../main/config/settings.ts';
import { openStudio } from '../main/studio.ts';
import { FAL_MODEL, falQueue, realMedia, type Ledger } from './fakes/providers.ts';
import { startFake } from './fakes/server.ts';
import { buildBundle, layOutCheckout, sinceQuit, startBundle as startApp } from './helpers/desktopBundle.ts';
import { alive } from '../main/media/staleParts.ts';
import { writeSettings } from './helpers/processes.ts';
import { rowsOf } from './helpers/sql.ts';
import { tempDir } from './helpers/tmp.ts';
import { until } from './helpers/wait.ts';

/** Electron's UtilityProcess as the relay sees it, driven by the test: what was posted to it, and its messages and exit. */
class FakeChild extends EventEmitter {
  posted: ToEngine[] = [];
  postMessage(message: ToEngine) {
    this.posted.push(message);
  }
  kill() {
    return true;
  }
  say(message: FromEngine) {
    this.emit('message', message);
  }
  requests() {
    return this.posted.filter((m) => m.type === 'request');
  }
}

function relayed(overrides: Partial<EngineRelayDeps> = {}) {
  const children: FakeChild[] = [];
  const crashes: { message: string; restarting: boolean }[] = [];
  const changes: number[] = [];
  let now = 1_000_000;
  const relay = new EngineRelay({
    fork: () => {
      children.push(new FakeChild());
      return children.at(-1)!;
    },
    start: () => ({ dataDir: '/data', binding: '/native/better_sqlite3.node', driver: '/app/better-sqlite3', keys: { encrypted: true, keys: {} }, logsDir: '/logs', crashDumps: '/dumps' }),
    saveKey: () => undefined,
    changed: (change) => changes.push(change.version),
    crashed: (notice, restarting) => crashes.push({ message: notice.message, restarting }),
    log: () => undefined,
    now: () => (now += 1_000),
    ...overrides,
  });
  const latest = () => children.at(-1)!;
  return { relay, children, crashes, changes, latest };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('the engine protocol, without Electron', () => {
  it('answers each call by its own id, never reuses one, and fails every waiting call at once, sending none again', async () => {
    const calls = new PendingCalls<string>();
    const a = calls.add();
    const b = calls.add();
    expect(b.id).not.toBe(a.id);
    expect(calls.settle(b.id, 'b')).toBe(true);
    expect(calls.settle(b.id, 'again')).toBe(false);
    expect(await b.answer).toBe('b');
    expect(calls.failAll('stopped')).toBe(1);
    expect(await a.answer).toBe('stopped');
    expect(calls.settle(a.id, 'late')).toBe(false);
    expect(calls.add().id).toBeGreaterThan(b.id);
  });

  it('restarts after three crashes within a minute, not a fourth, and forgets crashes older than a minute', () => {
    expect(mayRestart([], 0)).toBe(true);
    expect(mayRestart([0, 10_000], 20_000)).toBe(true);
    expect(mayRestart([0, 10_000, 20_000], 30_000)).toBe(false);
    expect(mayRestart([0, 10_000, 20_000], 61_000)).toBe(true);
  });

  it('relays a request once the engine is ready, and hands back its answer', async () => {
    const { relay, latest } = relayed();
    const opened = relay.open();
    expect(latest().posted[0]).toMatchObject({ type: 'start', start: { dataDir: '/data' } });
    latest().say({ type: 'ready' });
    await opened;
    const answer = relay.request({ kind: 'api', method: 'listProjects', args: [] });
    await settle();
    const [sent] = latest().requests() as Extract<ToEngine, { type: 'request' }>[];
    expect(sent).toMatchObject({ request: { kind: 'api', method: 'listProjects' } });
    latest().say({ type: 'answer', id: sent!.id, answer: { result: ['Fox'] } });
    expect(await answer).toEqual({ result: ['Fox'] });
  });

  it('answers a call in flight at a crash that it may not have happened, restarts, and sends the next call to the new engine only', async () => {
    const { relay, children, crashes, latest } = relayed();
    const opened = relay.open();
    latest().say({ type: 'ready' });
    await opened;
    const inFlight = relay.request({ kind: 'api', method: 'generate', args: ['Fox'] });
    await settle();
    children[0]!.emit('exit', 9);
    expect(await inFlight).toEqual({ error: STOPPED_MIDWAY });
    expect(crashes).toEqual([{ message: "The studio's engine stopped unexpectedly and is starting again", restarting: true }]);
    expect(children).toHaveLength(2);
    // Asked while the new engine starts: it waits, and reaches the new engine, the old call with it never.
    const waiting = relay.request({ kind: 'api', method: 'listProjects', args: [] });
    await settle();
    expect(latest().requests()).toEqual([]);
    latest().say({ type: 'ready' });
    await settle();
    const sent = latest().requests() as Extract<ToEngine, { type: 'request' }>[];
    expect(sent.map((m) => m.request)).toEqual([{ kind: 'api', method: 'listProjects', args: [] }]);
    latest().say({ type: 'answer', id: sent[0]!.id, answer: { result: [] } });
    expect(await waiting).toEqual({ result: [] });
    expect(children[0]!.requests()).toHaveLength(1);
  });

  it('stops restarting after three crashes in a minute, says so, and answers calls that the engine is down', async () => {
    const { relay, children, crashes, latest } = relayed();
    const opened = relay.open();
    latest().say({ type: 'ready' });
    await opened;
    for (let i = 0; i < 4; i++) {
      latest().say({ type: 'ready' });
      latest().emit('exit', 1);
    }
    expect(children).toHaveLength(4);
    expect(crashes.map((c) => c.restarting)).toEqual([true, true, true, false]);
    expect(crashes.at(-1)!.message).toBe("The studio's engine keeps stopping, so it was not started again");
    expect(await relay.request({ kind: 'api', method: 'listProjects', args: [] })).toEqual({ error: ENGINE_DOWN });
    await relay.stop();
  });

  it('a restart that cannot start counts as a crash, so a broken start is not tried for ever', async () => {
    const { relay, children, crashes, latest } = relayed();
    const opened = relay.open();
    latest().say({ type: 'ready' });
    await opened;
    latest().emit('exit', 9);
    for (let i = 0; i < 3; i++) {
      latest().say({ type: 'failed', message: 'the database is locked' });
      expect(latest().posted.at(-1)).toEqual({ type: 'stop' });
      latest().emit('exit', 0);
    }
    expect(children).toHaveLength(4);
    expect(crashes.map((c) => c.restarting)).toEqual([true, true, true, false]);
  });

  it('says so, and leaves the engine stopped, when what it starts with cannot be read for a restart', async () => {
    let starts = 0;
    const { relay, children, crashes, latest } = relayed({
      start: () => {
        if (++starts > 1) throw new Error('settings.json is not valid JSON (Unexpected end of JSON input); fix it or move it away');
        return { dataDir: '/data', binding: '/native/better_sqlite3.node', driver: '/app/better-sqlite3', keys: { encrypted: true, keys: {} }, logsDir: '/logs', crashDumps: '/dumps' };
      },
    });
    const opened = relay.open();
    latest().say({ type: 'ready' });
    await opened;
    latest().emit('exit', 9);
    expect(children).toHaveLength(1);
    expect(crashes).toEqual([{ message: "The studio's engine stopped unexpectedly and could not be started again", restarting: false }]);
    expect(await relay.request({ kind: 'api', method: 'listProjects', args: [] })).toEqual({ error: ENGINE_DOWN });
  });

  it("refuses to open with the engine's own words when the first start fails, and starts no other", async () => {
    const { relay, children, latest } = relayed();
    const opened = relay.open();
    latest().say({ type: 'failed', message: '/data/studio.db was made by a newer version of the studio (schema 9); update the studio to open it.' });
    latest().emit('exit', 0);
    await expect(opened).rejects.toThrow('/data/studio.db was made by a newer version of the studio (schema 9); update the studio to open it.');
    expect(children).toHaveLength(1);
  });

  it('stops by asking, waits for the exit, answers what was left that the app is quitting, and restarts nothing', async () => {
    const { relay, children, crashes, latest } = relayed();
    const opened = relay.open();
    latest().say({ type: 'ready' });
    await opened;
    const left = relay.request({ kind: 'api', method: 'listProjects', args: [] });
    await settle();
    let stopped = false;
    const stopping = relay.stop().then(() => (stopped = true));
    expect(latest().posted.at(-1)).toEqual({ type: 'stop' });
    await settle();
    expect(stopped).toBe(false);
    latest().emit('exit', 0);
    await stopping;
    expect(await left).toEqual({ error: QUITTING });
    expect(children).toHaveLength(1);
    expect(crashes).toEqual([]);
    expect(await relay.request({ kind: 'api', method: 'listProjects', args: [] })).toEqual({ error: QUITTING });
  });

  it("has the main process save a key, and passes its refusal back; numbers changes itself, so they rise across restarts", async () => {
    const { relay, changes, latest } = relayed({
      saveKey: (_name, value) => {
        if (value === 'locked') throw new Error("the system's key store would not encrypt the key; nothing was saved");
      },
    });
    const opened = relay.open();
    latest().say({ type: 'ready' });
    await opened;
    latest().say({ type: 'saveKey', id: 1, name: 'fal', value: 'fal-key-123456' });
    latest().say({ type: 'saveKey', id: 2, name: 'fal', value: 'locked' });
    expect(latest().posted.slice(-2)).toEqual([
      { type: 'keySaved', id: 1, error: null },
      { type: 'keySaved', id: 2, error: "the system's key store would not encrypt the key; nothing was saved" },
    ]);
    const change = (version: number): FromEngine => ({ type: 'changed', change: { version, needsDecision: 0 }, paidWorkInFlight: false, keepAwake: false });
    latest().say(change(1));
    latest().say(change(2));
    latest().emit('exit', 9);
    latest().say({ type: 'ready' });
    latest().say(change(1));
    expect(changes).toEqual([1, 2, 3]);
  });
});

describe("the engine's keys, decrypted by the main process", () => {
  const encryptor: Encryptor = {
    isEncryptionAvailable: () => true,
    getSelectedStorageBackend: () => 'gnome_libsecret',
    encryptString: (s) => Buffer.from(`enc:${s}`),
    decryptString: (b) => {
      if (!b.toString().startsWith('enc:')) throw new Error('Error while decrypting the ciphertext provided to safeStorage.decryptString.');
      return b.toString().slice(4);
    },
  };

  it('gives the engine the keys it sends with, says which cannot be read, and saves a new one through the main process', async () => {
    const dir = tempDir();
    const store = safeKeyStore(dir, encryptor, () => loadSettings(dir), {});
    store.set('fal', 'fal-secret-123456');
    writeFileSync(join(dir, 'keys.json'), JSON.stringify({ ...JSON.parse(readFileSync(join(dir, 'keys.json'), 'utf8')), openai: Buffer.from('other keyring').toString('base64') }));
    const snapshot = keySnapshot(store);
    expect(snapshot).toEqual({ encrypted: true, keys: { fal: 'fal-secret-123456', openai: null } });

    const engine = relayedKeyStore(snapshot, () => loadSettings(dir), async (name, value) => store.set(name, value), {});
    expect(engine.get('fal')).toBe('fal-secret-123456');
    expect(engine.source('fal')).toBe('keychain');
    expect(engine.source('openai')).toBe('unreadable');
    expect(engine.source('replicate')).toBeNull();
    await engine.set('replicate', 'r8_secret_123456');
    expect(engine.source('replicate')).toBe('keychain');
    expect(readFileSync(join(dir, 'keys.json'), 'utf8')).not.toContain('r8_secret_123456');
    expect(store.get('replicate')).toBe('r8_secret_123456');

    const refusing = relayedKeyStore(snapshot, () => loadSettings(dir), async () => {
      throw new Error('the keyring is locked');
    }, {});
    await expect(refusing.set('elevenlabs', 'sk_el_123456')).rejects.toThrow('the keyring is locked');
    expect(refusing.get('elevenlabs')).toBeUndefined();
  });
});

/** Writes `source` as an ES module the stand-in runs as the page (STANDIN_DRIVE), and returns its path. */
function pageScript(source: string): string {
  const file = join(tempDir(), 'page.mjs');
  writeFileSync(file, source);
  return file;
}

/** A data folder laid out as a checkout's, with fal at `falUrl` and one fal image enqueued; returns the task's id. */
async function checkoutWithFalTask(root: string, falUrl: string): Promise<number> {
  layOutCheckout(root);
  const dataDir = join(root, 'data');
  mkdirSync(dataDir);
  writeSettings(dataDir, { engine: { tickMs: 50 }, providers: { fal: { baseUrl: falUrl, key: 'fal-test-key' } } });
  const studio = await openStudio(dataDir);
  try {
    const project = await studio.projects.ensure('Crash', Date.now());
    return (await studio.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'fal', model: FAL_MODEL, input: { prompt: 'a fox' } }, Date.now())).id;
  } finally {
    await studio.close();
  }
}

/** The bundle run as startApp runs it, ended when the test ends if the test did not end it (its engine goes with it). */
function startBundle(root: string, env: Record<string, string> = {}) {
  const app = startApp(root, env);
  onTestFinished(() => {
    if (app.child.exitCode === null && app.child.signalCode === null) app.child.kill('SIGKILL');
  });
  return app;
}


/** The bundle started on a checkout with one fal task, which fal answers 1.5 s after taking it (and charging). */
async function bundleSendingToFal(env: Record<string, string> = {}) {
  const ledger: Ledger = { charged: [] };
  const fake = await startFake(falQueue(ledger, (await realMedia()).png, { submitDelayMs: 1_500 }));
  const root = tempDir();
  const taskId = await checkoutWithFalTask(root, fake.url);
  const app = startBundle(root, env);
  const engine = Number((await app.waitFor('utilityProcess')).detail.pid);
  return { ledger, root, taskId, app, engine };
}

describe('the built bundle, its engine in a utility process', () => {
  beforeAll(() => buildBundle(), 60_000);

  it('a paid request in flight when the engine process is SIGKILLed: the person is told, the engine restarts, the request id is saved, one charge', async () => {
    const ledger: Ledger = { charged: [] };
    // fal names the request in its headers at once, and holds the body long past the kill.
    const fake = await startFake(falQueue(ledger, (await realMedia()).png, { holdBodyMs: 8_000 }));
    const root = tempDir();
    const taskId = await checkoutWithFalTask(root, fake.url);
    // The page asks for the task list again and again from the moment it is told to, so a call is in flight at the kill.
    const page = pageScript(`
      export default async function ({ invoke, report }) {
        await new Promise((resolve) => { process.once('SIGUSR2', resolve); report('driving'); });
        for (;;) {
          const answer = await invoke('studio', 'listTasks', ['Crash', 0, 10]);
          if ('error' in answer) { report('answer', answer); break; }
        }
        const after = await invoke('studio', 'listTasks', ['Crash', 0, 10]);
        report('answer', { tasks: after.result.tasks.length });
      }
    `);
    const app = startBundle(root, { STANDIN_DRIVE: page });
    const first = Number((await app.waitFor('utilityProcess')).detail.pid);
    await app.waitFor('driving');
    const journal = join(root, 'data', 'receipts');
    await until(() => ledger.charged.length === 1 && existsSync(journal) && readdirSync(journal, { recursive: true, encoding: 'utf8' }).some((f) => f.endsWith('.jsonl') && readFileSync(join(journal, f), 'utf8').includes('fal-req-1')), 20_000);

    app.child.kill('SIGUSR2');
    await new Promise((r) => setTimeout(r, 200));
    process.kill(first, 'SIGKILL');

    const told = await app.waitFor('showMessageBox');
    expect(told.detail).toMatchObject({ type: 'warning', message: "The studio's engine stopped unexpectedly and is starting again", attached: true });
    expect(told.detail.detail).toMatch(/^The engine process ended with code 9\. Paid requests it was sending are recovered as it starts: each keeps its request id, and none is sent twice\./);
    const second = Number((await app.waitFor('utilityProcess', (d) => d.pid !== first)).detail.pid);
    expect(second).not.toBe(first);
    expect((await app.waitFor('answer')).detail).toEqual({ error: STOPPED_MIDWAY });
    expect((await app.waitFor('answer', (d) => 'tasks' in d)).detail).toEqual({ tasks: 1 });

    // The new engine recovers the dead one's row at once, with the id its journal kept, and polls it to the end.
    await until(() => rowsOf(join(root, 'data'), `SELECT status FROM tasks WHERE id = ${taskId}`)[0]!.status === 'SUCCEEDED', 30_000);
    app.child.kill('SIGTERM');
    expect(await app.exited).toBe(0);
    expect(alive(second)).toBe(false);
    const studio = await openStudio(join(root, 'data'));
    try {
      expect(await studio.tasks.get(taskId)).toMatchObject({ status: 'SUCCEEDED', remoteRequestId: 'fal-req-1' });
    } finally {
      await studio.close();
    }
    expect(ledger.charged).toEqual(['fal-req-1']);
    expect(fake.count('POST', new RegExp(FAL_MODEL))).toBe(1);
    expect(app.events.filter((e) => e.event === 'utilityProcess')).toHaveLength(2);
  }, 90_000);

  it('a quit while a paid request is being sent waits for the engine process to stop, so the request id is saved', async () => {
    const { ledger, root, taskId, app, engine } = await bundleSendingToFal();
    await until(() => ledger.charged.length === 1, 15_000);
    app.child.kill('SIGTERM');
    expect(await app.exited).toBe(0);
    expect(sinceQuit(app.events)).toEqual(['quit', 'quit', 'exit']);
    expect(alive(engine)).toBe(false);
    expect(app.events.some((e) => e.event === 'showMessageBox')).toBe(false);
    const studio = await openStudio(join(root, 'data'));
    try {
      expect(await studio.tasks.get(taskId)).toMatchObject({ status: 'SUBMITTED', remoteRequestId: 'fal-req-1' });
    } finally {
      await studio.close();
    }
    expect(ledger.charged).toEqual(['fal-req-1']);
  }, 60_000);

  it('a quit while the engine is frozen (SIGSTOP) gives up after its limit and ends the engine too, so none outlives the app; a window that loads meanwhile stays hidden', async () => {
    // A slow start: the page loads only once the person has quit.
    const { ledger, root, taskId, app, engine } = await bundleSendingToFal({ STANDIN_LOAD_ON: 'SIGUSR2' });
    await until(() => rowsOf(join(root, 'data'), `SELECT remote_request_id AS id FROM tasks WHERE id = ${taskId}`)[0]!.id === 'fal-req-1', 15_000);
    process.kill(engine, 'SIGSTOP');
    onTestFinished(() => {
      if (alive(engine)) process.kill(engine, 'SIGKILL');
    });
    await app.waitFor('loadHeld');
    const asked = Date.now();
    app.child.kill('SIGTERM');
    await app.waitFor('quit');
    app.child.kill('SIGUSR2');
    expect((await app.waitFor('loaded')).detail.ipc).toEqual({ error: QUITTING });
    expect(await app.exited).toBe(0);
    expect(Date.now() - asked).toBeGreaterThanOrEqual(14_000);
    const events = app.events.map((e) => e.event);
    expect(events.slice(events.indexOf('loaded'))).toEqual(['loaded', 'quit', 'exit']);
    expect(events).not.toContain('show');
    // Gone, or a zombie waiting to be reaped: never a stopped process holding the data folder.
    await until(() => !alive(engine) || /^State:\s+Z/m.test(readFileSync(`/proc/${engine}/status`, 'utf8')), 5_000);
    expect(rowsOf(join(root, 'data'), `SELECT remote_request_id AS id FROM tasks WHERE id = ${taskId}`)[0]!.id).toBe('fal-req-1');
    expect(ledger.charged).toEqual(['fal-req-1']);
  }, 60_000);

  it('a key entered in Settings is encrypted by the main process, and the engine uses it at once', async () => {
    const root = tempDir();
    layOutCheckout(root);
    const page = pageScript(`
      export default async function ({ invoke, report }) {
        const saved = await invoke('studio', 'saveSettings', [{ key: { provider: 'fal', value: 'fal-typed-key-123456' } }]);
        report('answer', { fal: saved.result?.keys.fal ?? saved.error });
        const again = await invoke('studio', 'getSettings', []);
        report('answer', { fal: again.result.keys.fal });
        process.kill(process.pid, 'SIGTERM');
      }
    `);
    const app = startBundle(root, { STANDIN_DRIVE: page, FAL_KEY: '' });
    expect(await app.exited, app.stderr()).toBe(0);
    expect(app.events.filter((e) => e.event === 'answer').map((e) => e.detail)).toEqual([{ fal: 'keychain' }, { fal: 'keychain' }]);
    const stored = JSON.parse(readFileSync(join(root, 'data', 'keys.json'), 'utf8')) as Record<string, string>;
    // The stand-in's safeStorage marks what it encrypted with "v10", as Chromium's does.
    expect(Buffer.from(stored.fal!, 'base64').toString()).toBe('v10fal-typed-key-123456');
  }, 60_000);
});
