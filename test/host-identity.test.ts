import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { hostFilePath, readHostIdentity } from '../main/host/identity.ts';
import { launchHost, type LaunchedHost } from '../main/host/launch.ts';
import { browserCommand, shouldOpenBrowser } from '../main/host/openBrowser.ts';
import { openStudio } from '../main/studio.ts';
import { writeSettings } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';

const hosts: LaunchedHost[] = [];
afterEach(async () => {
  for (const h of hosts.splice(0)) await h.stop();
});

async function dataDir(): Promise<string> {
  const dir = tempDir();
  writeSettings(dir, { engine: { tickMs: 100 } });
  await (await openStudio(dir)).close();
  return dir;
}

async function launch(dir: string, port?: number): Promise<LaunchedHost> {
  const host = await launchHost(dir, { port, log: () => undefined });
  hosts.push(host);
  return host;
}

async function stop(host: LaunchedHost): Promise<void> {
  hosts.splice(hosts.indexOf(host), 1);
  await host.stop();
}

/** A GET as a browser sends it, without following a redirect. */
function get(url: string): Promise<{ status: number; location?: string }> {
  return new Promise((resolve, reject) => {
    request(url, (res) => {
      res.resume();
      resolve({ status: res.statusCode!, location: res.headers.location });
    })
      .on('error', reject)
      .end();
  });
}

describe('the host keeps its address and token across restarts on one data folder', () => {
  it('keeps them in a file only this user can read, and uses them again', async () => {
    const dir = await dataDir();
    const first = await launch(dir);
    if (process.platform !== 'win32') expect(statSync(hostFilePath(dir)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(hostFilePath(dir), 'utf8'))).toEqual({ token: first.token, port: first.port });
    await stop(first);
    const second = await launch(dir);
    expect(second.openUrl).toBe(first.openUrl);
  });

  it('takes a free port when the last one has been taken meanwhile, with the same token', async () => {
    const dir = await dataDir();
    const first = await launch(dir);
    const port = first.port;
    await stop(first);
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
    try {
      const second = await launch(dir);
      expect(second.port).not.toBe(port);
      expect(second.token).toBe(first.token);
      expect(readHostIdentity(dir).port).toBe(second.port);
    } finally {
      squatter.close();
    }
  });

  it('does not use a token from a file others could read', async () => {
    if (process.platform === 'win32') return;
    const dir = await dataDir();
    const first = await launch(dir);
    await stop(first);
    chmodSync(hostFilePath(dir), 0o644);
    const second = await launch(dir);
    expect(second.token).not.toBe(first.token);
    expect(statSync(hostFilePath(dir)).mode & 0o777).toBe(0o600);
  });

  it('starts with a new token when the file is unreadable as JSON', async () => {
    const dir = await dataDir();
    writeFileSync(hostFilePath(dir), '{not json', { mode: 0o600 });
    const host = await launch(dir);
    expect(host.token).toMatch(/^[0-9a-f]{48}$/);
  });

  it('a port asked for with --port is that port or a refusal, and is kept for next time', async () => {
    const dir = await dataDir();
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const free = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const host = await launch(dir, free);
    expect(host.port).toBe(free);
    expect(readHostIdentity(dir).port).toBe(free);
    await expect(launchHost(await dataDir(), { port: free })).rejects.toThrow(/port \d+ is in use/);
  });
});

describe('opening the browser', () => {
  it('gives the browser a one-use address, so the token is never on a command line', async () => {
    const host = await launch(await dataDir());
    const once = host.openOnce();
    expect(once).not.toContain(host.token);
    const first = await get(once);
    expect(first).toEqual({ status: 302, location: `/#token=${host.token}` });
    expect((await get(once)).status).toBe(410);
    expect((await get(`${host.url}/open/${'0'.repeat(32)}`)).status).toBe(410);
  });

  it('opens one only where there is a desktop, and never when told not to or in CI', () => {
    expect(shouldOpenBrowser({ DISPLAY: ':0' }, 'linux')).toBe(true);
    expect(shouldOpenBrowser({ WAYLAND_DISPLAY: 'wayland-0' }, 'linux')).toBe(true);
    expect(shouldOpenBrowser({}, 'linux')).toBe(false);
    expect(shouldOpenBrowser({}, 'darwin')).toBe(true);
    expect(shouldOpenBrowser({}, 'win32')).toBe(true);
    expect(shouldOpenBrowser({ DISPLAY: ':0', CI: 'true' }, 'linux')).toBe(false);
    expect(shouldOpenBrowser({ STUDIO_NO_OPEN: '1' }, 'darwin')).toBe(false);
    expect(browserCommand('http://127.0.0.1:1/open/x', 'linux')).toEqual(['xdg-open', ['http://127.0.0.1:1/open/x']]);
    expect(browserCommand('http://127.0.0.1:1/open/x', 'darwin')).toEqual(['open', ['http://127.0.0.1:1/open/x']]);
    expect(browserCommand('http://127.0.0.1:1/open/x', 'win32')).toEqual(['rundll32', ['url.dll,FileProtocolHandler', 'http://127.0.0.1:1/open/x']]);
  });
});
