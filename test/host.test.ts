import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { launchHost, type LaunchedHost } from '../main/host/launch.ts';
import { parseRange } from '../main/host/range.ts';
import { openStudio } from '../main/studio.ts';
import { writeSettings } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';

let host: LaunchedHost;
afterEach(async () => host?.stop());

/** A raw HTTP call, so the test can send the Host and Origin a hostile page would. */
function call(path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  const port = new URL(host.url).port;
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: body === undefined ? 'GET' : 'POST', headers }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function start() {
  const dir = tempDir();
  writeSettings(dir, { engine: { tickMs: 100 } });
  await (await openStudio(dir)).close();
  host = await launchHost(dir);
  const hostHeader = new URL(host.url).host;
  const auth = { host: hostHeader, authorization: `Bearer ${host.token}`, 'content-type': 'application/json' };
  return { dir, hostHeader, auth };
}

describe('the loopback host', () => {
  it('answers the StudioApi to a caller with the token', async () => {
    const { auth } = await start();
    const created = await call('/api/createProject', auth, JSON.stringify(['Fox']));
    expect(created.status).toBe(200);
    const list = await call('/api/listProjects', auth, '[]');
    expect(JSON.parse(list.text).result.map((p: { name: string }) => p.name)).toEqual(['Fox']);
  });

  it('refuses a call without the token', async () => {
    const { hostHeader } = await start();
    const res = await call('/api/listProjects', { host: hostHeader }, '[]');
    expect(res.status).toBe(401);
    expect(JSON.parse(res.text).error).toMatch(/no valid token/);
    expect((await call('/api/listProjects', { host: hostHeader, authorization: 'Bearer wrong' }, '[]')).status).toBe(401);
  });

  it('refuses a Host header that is not its loopback address (DNS rebinding)', async () => {
    const { auth } = await start();
    const res = await call('/api/listProjects', { ...auth, host: `evil.example:${new URL(host.url).port}` }, '[]');
    expect(res.status).toBe(421);
    expect((await call('/', { host: 'evil.example' })).status).toBe(421);
  });

  it('refuses a request from another site (foreign Origin), even with the token', async () => {
    const { auth } = await start();
    const res = await call('/api/createProject', { ...auth, origin: 'https://evil.example' }, JSON.stringify(['Stolen']));
    expect(res.status).toBe(403);
    expect(JSON.parse((await call('/api/listProjects', auth, '[]')).text).result).toEqual([]);
  });

  it('answers a refusal the person can act on with its message, and an unknown method with 404', async () => {
    const { auth } = await start();
    const res = await call('/api/setBudget', auth, JSON.stringify(['Nope', 5]));
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).error).toBe('there is no project "Nope"');
    expect((await call('/api/dropTables', auth, '[]')).status).toBe(404);
  });

  it('pushes a change event when the database changes', async () => {
    const { hostHeader, auth } = await start();
    const events: string[] = [];
    const port = new URL(host.url).port;
    await new Promise<void>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: `/api/events?token=${host.token}`, headers: { host: hostHeader } }, (res) => {
        res.on('data', (d) => {
          events.push(String(d));
          if (events.length === 1) void call('/api/createProject', auth, JSON.stringify(['Changed']));
          if (events.length === 2) {
            req.destroy();
            resolve();
          }
        });
      });
      req.on('error', reject);
      req.end();
    });
    expect(JSON.parse(events[1]!.replace(/^data: /, '')).version).toBeGreaterThan(JSON.parse(events[0]!.replace(/^data: /, '')).version);
  });

  it('sends the page with a Content-Security-Policy', async () => {
    const { hostHeader } = await start();
    const res = await call('/', { host: hostHeader });
    expect(String(res.headers['content-security-policy'])).toContain("script-src 'self'");
  });
});

describe('Range answers', () => {
  it.each([
    [undefined, 1000, null],
    ['bytes=0-99', 1000, { start: 0, end: 99 }],
    ['bytes=500-', 1000, { start: 500, end: 999 }],
    ['bytes=-100', 1000, { start: 900, end: 999 }],
    ['bytes=900-5000', 1000, { start: 900, end: 999 }],
    ['bytes=1000-1001', 1000, 'unsatisfiable'],
    ['bytes=5-2', 1000, 'unsatisfiable'],
    ['items=0-1', 1000, null],
  ] as const)('%s of %i bytes', (header, size, expected) => {
    expect(parseRange(header, size)).toEqual(expected);
  });
});
