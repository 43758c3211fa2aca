import { execFileSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkCall, IpcRefused } from '../app/ipcValidation.ts';
import { safeKeyStore, type Encryptor } from '../app/keys.ts';
import { FAL_ADMIN_KEY_NAME } from '../main/api/serviceContext.ts';
import { mediaResponse } from '../app/mediaProtocol.ts';
import { wirePower } from '../app/power.ts';
import { APP_CSP, isAppUrl, windowOptions } from '../app/window.ts';
import { loadSettings } from '../main/config/settings.ts';
import { tempDir } from './helpers/tmp.ts';

// The Electron binary cannot run here: these test the shell's own code with Electron's parts injected.
const page = { url: 'app://studio/index.html', isMainFrame: true };

describe('the window', () => {
  it('isolates the page: context isolation, sandbox, no Node, web security', () => {
    expect(windowOptions('/p.cjs', true).webPreferences).toMatchObject({
      preload: '/p.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      devTools: false,
    });
    expect(windowOptions('/p.cjs', false).webPreferences!.devTools).toBe(true);
    expect(APP_CSP).toContain("script-src 'self'");
  });

  it('ships with the Electron fuses that close the ways around the sandbox set in its packaging', () => {
    const config = readFileSync(join(import.meta.dirname, '..', 'electron-builder.yml'), 'utf8');
    const fuses = Object.fromEntries(
      [...(/^electronFuses:\n((?:  \w+: \w+\n)+)/m.exec(config)?.[1] ?? '').matchAll(/ {2}(\w+): (\w+)/g)].map((m) => [m[1], m[2]]),
    );
    expect(fuses).toMatchObject({
      runAsNode: 'false',
      enableNodeOptionsEnvironmentVariable: 'false',
      enableNodeCliInspectArguments: 'false',
      enableCookieEncryption: 'true',
      enableEmbeddedAsarIntegrityValidation: 'true',
      onlyLoadAppFromAsar: 'true',
    });
    expect(config).toMatch(/^asar:\n  smartUnpack: false$/m);
  });

  it('allows navigation only to its own pages, by parsing the URL', () => {
    expect(isAppUrl('app://studio/index.html')).toBe(true);
    expect(isAppUrl('app://studio.evil.example/')).toBe(false);
    expect(isAppUrl('https://app//studio')).toBe(false);
    expect(isAppUrl('file:///etc/passwd')).toBe(false);
    expect(isAppUrl('not a url')).toBe(false);
  });
});

describe('IPC', () => {
  it('takes well-formed calls from the app page', () => {
    expect(() => checkCall('listTasks', ['Fox', 0, 100], page)).not.toThrow();
    expect(() => checkCall('resolve', [3, { adopt: 'req-1' }], page)).not.toThrow();
    expect(() => checkCall('exportFilm', ['Fox', 'vertical'], page)).not.toThrow();
    expect(() => checkCall('filmRenders', ['Fox'], page)).not.toThrow();
  });

  it.each([
    ['another page', 'listProjects', [], { url: 'https://evil.example/', isMainFrame: true }, /did not come from the studio window/],
    ['an iframe', 'listProjects', [], { url: 'app://studio/index.html', isMainFrame: false }, /did not come from the studio window/],
    ['no frame', 'listProjects', [], null, /did not come from the studio window/],
    ['an unknown method', 'eval', [], page, /there is no method eval/],
    ['a bad task id', 'cancel', ['1; DROP TABLE tasks'], page, /wrong shape/],
    ['a huge page', 'listTasks', ['Fox', 0, 1e9], page, /wrong shape/],
    ['a malformed decision', 'resolve', [3, { adopt: 42 }], page, /wrong shape/],
    ['a negative budget', 'setBudget', ['Fox', -5], page, /wrong shape/],
    ['an export in no preset', 'exportFilm', ['Fox', 'mkv'], page, /wrong shape/],
  ] as const)('refuses %s', (_name, method, args, sender, message) => {
    expect(() => checkCall(method, [...args], sender)).toThrow(IpcRefused);
    expect(() => checkCall(method, [...args], sender)).toThrow(message);
  });
});

describe('the media protocol', () => {
  const file = () => {
    const path = join(tempDir(), 'clip.mp4');
    writeFileSync(path, Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 256)));
    return path;
  };

  it('answers a Range request with 206 and the exact bytes, so video can seek', async () => {
    const path = file();
    const res = await mediaResponse(new Request('studio-media://task/7', { headers: { range: 'bytes=100-199' } }), async (id) => (id === 7 ? path : null));
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe('bytes 100-199/1000');
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.headers.get('content-type')).toBe('video/mp4');
    expect(Buffer.from(await res.arrayBuffer()).equals(readFileSync(path).subarray(100, 200))).toBe(true);
  });

  it('answers the whole file without Range, 416 past the end, 404 for an unknown task', async () => {
    const path = file();
    const whole = await mediaResponse(new Request('studio-media://task/7'), async () => path);
    expect(whole.status).toBe(200);
    expect((await whole.arrayBuffer()).byteLength).toBe(1000);
    expect((await mediaResponse(new Request('studio-media://task/7', { headers: { range: 'bytes=5000-' } }), async () => path)).status).toBe(416);
    expect((await mediaResponse(new Request('studio-media://task/8'), async () => null)).status).toBe(404);
    expect((await mediaResponse(new Request('studio-media://other/7'), async () => path)).status).toBe(404);
  });
});

describe('keys', () => {
  const fake = (backend: string): Encryptor => ({
    isEncryptionAvailable: () => true,
    getSelectedStorageBackend: () => backend,
    encryptString: (s) => Buffer.from(`enc:${s}`),
    decryptString: (b) => b.toString().replace(/^enc:/, ''),
  });

  it('stores keys encrypted, never as typed, and says where each comes from', () => {
    const dir = tempDir();
    const keys = safeKeyStore(dir, fake('gnome_libsecret'), () => loadSettings(dir), {});
    keys.set('fal', 'fal-secret-123456');
    expect(readFileSync(join(dir, 'keys.json'), 'utf8')).not.toContain('fal-secret-123456');
    expect(keys.get('fal')).toBe('fal-secret-123456');
    expect(keys.source('fal')).toBe('keychain');
    expect(keys.source('openai')).toBeNull();
    expect(keys.encrypted).toBe(true);
    keys.set('fal', null);
    expect(keys.get('fal')).toBeUndefined();
  });

  it("keeps fal's admin key encrypted beside the request keys, never in settings.json, and still reads one written there by hand", () => {
    const dir = tempDir();
    const keys = safeKeyStore(dir, fake('gnome_libsecret'), () => loadSettings(dir), {});
    keys.set(FAL_ADMIN_KEY_NAME, 'fal-admin-secret-123456');
    expect(readFileSync(join(dir, 'keys.json'), 'utf8')).not.toContain('fal-admin-secret-123456');
    expect(existsSync(join(dir, 'settings.json')) ? readFileSync(join(dir, 'settings.json'), 'utf8') : '').not.toContain('fal-admin-secret');
    expect(keys.secret(FAL_ADMIN_KEY_NAME)).toBe('fal-admin-secret-123456');
    keys.set(FAL_ADMIN_KEY_NAME, null);
    expect(keys.secret(FAL_ADMIN_KEY_NAME)).toBeUndefined();
    writeFileSync(join(dir, 'settings.json'), JSON.stringify({ providers: { fal: { adminKey: 'typed-in-settings' } } }));
    expect(keys.secret(FAL_ADMIN_KEY_NAME)).toBe('typed-in-settings');
  });

  it('starts with a damaged keys.json, refuses to save a key over it, and leaves it as it is', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'keys.json'), '{"fal": "cut sh');
    const keys = safeKeyStore(dir, fake('gnome_libsecret'), () => loadSettings(dir), {});
    expect(keys.get('fal')).toBeUndefined();
    expect(keys.source('fal')).toBe('unreadable');
    expect(() => keys.set('openai', 'sk-new-0123456789')).toThrow(/keys\.json is damaged, so the keys in it cannot be read; it was left as it is/);
    expect(readFileSync(join(dir, 'keys.json'), 'utf8')).toBe('{"fal": "cut sh');
  });

  it('reports a key this machine cannot decrypt as unreadable for that provider, and starts', () => {
    const dir = tempDir();
    safeKeyStore(dir, fake('gnome_libsecret'), () => loadSettings(dir), {}).set('fal', 'fal-secret-123456');
    // The keyring changed: Electron's decryptString throws (shell/browser/api/electron_api_safe_storage.cc).
    const changed = { ...fake('gnome_libsecret'), decryptString: () => { throw new Error('Error while decrypting the ciphertext provided to safeStorage.decryptString.'); } };
    const keys = safeKeyStore(dir, changed, () => loadSettings(dir), {});
    expect(keys.source('fal')).toBe('unreadable');
    expect(keys.get('fal')).toBeUndefined();
    expect(keys.source('openai')).toBeNull();
    keys.set('fal', 'fal-new-secret-987654');
    expect(safeKeyStore(dir, fake('gnome_libsecret'), () => loadSettings(dir), {}).get('fal')).toBe('fal-new-secret-987654');
  });

  it('refuses in words, saving nothing, when the system key store will not encrypt', () => {
    const dir = tempDir();
    const locked = { ...fake('gnome_libsecret'), encryptString: (): Buffer => { throw new Error('Encryption is not available.'); } };
    const keys = safeKeyStore(dir, locked, () => loadSettings(dir), {});
    expect(() => keys.set('fal', 'fal-secret-123456')).toThrow("the system's key store would not encrypt the key (Encryption is not available.); nothing was saved");
    expect(keys.source('fal')).toBeNull();
  });

  it('opts into plain-text encryption where Linux has no keyring, so a key can be saved, and says keys are readable', () => {
    const dir = tempDir();
    // Under basic_text, encryption is available only after setUsePlainTextEncryption(true) (docs/api/safe-storage.md).
    let plain = false;
    const basic: Encryptor = {
      ...fake('basic_text'),
      isEncryptionAvailable: () => plain,
      setUsePlainTextEncryption: (on) => (plain = on),
      encryptString: (s) => {
        if (!plain) throw new Error('Error while encrypting the text provided to safeStorage.encryptString. Encryption is not available.');
        return Buffer.from(`enc:${s}`);
      },
    };
    const keys = safeKeyStore(dir, basic, () => loadSettings(dir), {});
    expect(plain).toBe(true);
    expect(keys.encrypted).toBe(false);
    keys.set('fal', 'fal-secret-123456');
    expect(keys.get('fal')).toBe('fal-secret-123456');
  });
});

describe('power', () => {
  it('renews leases on suspend and resume, and keeps the machine awake only while paid work runs and it was asked', () => {
    const events = new EventEmitter();
    const blocks: string[] = [];
    let inFlight = true;
    let renewals = 0;
    let keepAwake = true;
    const power = wirePower(
      events as never,
      { start: () => (blocks.push('start'), 1), stop: () => void blocks.push('stop') },
      { renewNow: () => void renewals++, paidWorkInFlight: () => inFlight },
      () => keepAwake,
    );
    events.emit('suspend');
    events.emit('resume');
    expect(renewals).toBe(2);
    power.update();
    power.update();
    inFlight = false;
    power.update();
    keepAwake = false;
    inFlight = true;
    power.update();
    expect(blocks).toEqual(['start', 'stop']);
  });
});

describe('the desktop bundle', () => {
  it('builds, with a preload that needs nothing but electron, as a sandboxed preload must', () => {
    execFileSync(process.execPath, ['scripts/build-app.mjs']);
    const preload = readFileSync('dist/app/preload.cjs', 'utf8');
    expect([...preload.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1])).toEqual(['electron']);
    expect(readFileSync('dist/app/main.mjs', 'utf8')).toContain('requestSingleInstanceLock');
  });
});
