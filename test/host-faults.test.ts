import Database from 'better-sqlite3';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { launchHost, type LaunchedHost } from '../main/host/launch.ts';
import { openStudio } from '../main/studio.ts';
import { runStudio, startStudio, writeSettings } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';
import { until } from './helpers/wait.ts';

/** Faults around the loopback host, with real processes and real sockets. */

let host: LaunchedHost | undefined;
let squatter: Server | undefined;
afterEach(async () => {
  await host?.stop();
  host = undefined;
  await new Promise((r) => (squatter ? squatter.close(r) : r(undefined)));
  squatter = undefined;
});

function get(url: string, path: string, token: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { headers: { host: new URL(url).host, authorization: `Bearer ${token}` } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A data folder with one simulator image task waiting. */
async function withOneTask(): Promise<{ dir: string; id: number }> {
  const dir = tempDir();
  writeSettings(dir, { engine: { tickMs: 50 } });
  const studio = await openStudio(dir);
  const project = await studio.projects.ensure('Fox', Date.now());
  const id = (await studio.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt: 'a fox' } }, Date.now())).id;
  await studio.close();
  return { dir, id };
}

describe('the loopback host meets faults', () => {
  it('on a port in use, says so in one line, exits 2, and sends nothing', async () => {
    squatter = createServer();
    await new Promise<void>((r) => squatter!.listen(0, '127.0.0.1', r));
    const port = (squatter.address() as AddressInfo).port;
    const { dir, id } = await withOneTask();

    const run = await runStudio(dir, ['serve', '--port', String(port)]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toBe(`studio: port ${port} is in use; pick another with --port`);
    const after = await openStudio(dir);
    expect(await after.tasks.get(id)).toMatchObject({ status: 'PENDING', attempts: 0, submitStartedAt: null });
    expect((await after.tasks.events(id)).map((e) => e.reason)).toEqual(['enqueued']);
    await after.close();
  });

  it('answers 404 for a result whose file became a folder, and keeps serving', async () => {
    const { dir, id } = await withOneTask();
    expect((await runStudio(dir, ['worker', '--until-idle'])).code).toBe(0);
    const done = await openStudio(dir);
    const path = done.media.resolve((await done.tasks.get(id))!.outputPath!);
    await done.close();
    rmSync(path);
    mkdirSync(path);

    host = await launchHost(dir);
    expect((await get(host.url, `/media/${id}`, host.token)).status).toBe(404);
    // Still up: the page is served as before.
    expect((await get(host.url, '/', host.token)).status).toBe(200);
  });

  it('closes the file of every media request the client cuts off (a seek in a video), leaking no descriptor', async () => {
    const { dir, id } = await withOneTask();
    expect((await runStudio(dir, ['worker', '--until-idle'])).code).toBe(0);
    host = await launchHost(dir);
    const open = () => readdirSync('/proc/self/fd').length;
    const before = open();
    for (let i = 0; i < 60; i++) {
      await new Promise<void>((resolve) => {
        const req = request(`${host!.url}/media/${id}`, { headers: { host: new URL(host!.url).host, authorization: `Bearer ${host!.token}` } }, (res) => {
          res.destroy();
          resolve();
        });
        req.on('error', () => resolve());
        req.end();
      });
    }
    await new Promise((r) => setTimeout(r, 500));
    expect(open() - before).toBeLessThan(15);
  });
});

describe('what the API may set', () => {
  it('refuses to choose the program the studio runs (ffmpeg), with 400, and leaves the settings file as it was', async () => {
    const dir = tempDir();
    writeSettings(dir, { engine: { tickMs: 50 } });
    const before = readFileSync(join(dir, 'settings.json'), 'utf8');
    host = await launchHost(dir);
    const res = await post(host.url, '/api/saveSettings', host.token, [{ ffmpegPath: '/bin/sh' }]);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).error).toMatch(/ffmpeg program is chosen in settings\.json .* not through the studio's API/);
    expect(readFileSync(join(dir, 'settings.json'), 'utf8')).toBe(before);
  });
  it.each([
    ['saveSettings', [{ leaseMs: {} }], /leaseMs must be a whole number from 1000 to 3600000/],
    ['saveSettings', [{ concurrency: { image: 'x' } }], /concurrency\.image must be a whole number from 0 to 32/],
    ['saveSettings', [{ concurrency: { render: 4 } }], /concurrency\.render must be a whole number from 0 to 1/],
    ['saveSettings', [{ key: { provider: 'fal', value: 5 } }], /key\.value must be the key as the provider shows it/],
    ['saveSettings', [{ leaseMs: 60_000, confirmAbove: -1 }], /confirmAbove must be an amount from 0 to 1000000/],
    ['saveSettings', [{ pollDeadline: 5 }], /settings have no field "pollDeadline"/],
    ['createProject', ['a\nb'], /cannot hold control characters/],
    ['createProject', ['x'.repeat(101)], /at most 100 characters/],
    ['setBudget', ['Fox', 1e308], /a budget is an amount from 0 to 1000000/],
    ['saveStoryboard', ['Fox', { scenes: Array.from({ length: 201 }, () => ({ imagePrompt: 'a fox' })) }], /at most 200 scenes; this one has 201/],
  ])('%s with bad input answers 400 with the reason and changes nothing', async (method, args, reason) => {
    const dir = tempDir();
    writeSettings(dir, { engine: { tickMs: 50 } });
    host = await launchHost(dir);
    await post(host.url, '/api/createProject', host.token, ['Fox']);
    const settingsBefore = readFileSync(join(dir, 'settings.json'), 'utf8');
    const projectsBefore = (await post(host.url, '/api/listProjects', host.token, [])).text;
    const res = await post(host.url, `/api/${method}`, host.token, args);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).error).toMatch(reason);
    expect(readFileSync(join(dir, 'settings.json'), 'utf8')).toBe(settingsBefore);
    expect((await post(host.url, '/api/listProjects', host.token, [])).text).toBe(projectsBefore);
  });
});

function post(url: string, path: string, token: string, body: unknown): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      { method: 'POST', headers: { host: new URL(url).host, authorization: `Bearer ${token}`, 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('a database another program holds locked', () => {
  it('pauses the engine, which says why to the UI, and resumes by itself when the lock goes', async () => {
    const dir = tempDir();
    writeSettings(dir, { engine: { tickMs: 50 } });
    host = await launchHost(dir);
    const status = async () => JSON.parse((await post(host!.url, '/api/engineStatus', host!.token, [])).text).result;
    expect(await status()).toEqual({ paused: null });
    const lock = new Database(join(dir, 'studio.db'));
    lock.exec('BEGIN EXCLUSIVE');
    try {
      await until(async () => (await status()).paused !== null, 30_000);
      expect((await status()).paused.reason).toBe('another program is holding the studio database locked');
      // Paused, the engine waits only briefly on the lock, so the host answers at once for as long as it lasts.
      for (let i = 0; i < 8; i++) {
        const asked = Date.now();
        await status();
        expect(Date.now() - asked).toBeLessThan(1_000);
        await new Promise((r) => setTimeout(r, 500));
      }
    } finally {
      lock.exec('COMMIT');
      lock.close();
    }
    await until(async () => (await status()).paused === null, 30_000);
  }, 60_000);
});

describe('a database deleted or replaced while the studio runs', () => {
  it('is noticed: the worker stops claiming and says so, instead of writing to a file nobody reads', async () => {
    const dir = tempDir();
    writeSettings(dir, { engine: { tickMs: 50 } });
    await (await openStudio(dir)).close();
    const worker = startStudio(dir, ['worker']);
    await worker.waitFor(/started as/);
    for (const f of ['studio.db', 'studio.db-wal', 'studio.db-shm']) rmSync(join(dir, f), { force: true });
    await worker.waitFor(/engine paused: the studio database .*studio\.db was deleted while the studio runs; nothing more is claimed\. Put it back/);
    // A new database at the same path is another file: its work waits for a studio that opened it.
    const fresh = await openStudio(dir);
    const project = await fresh.projects.ensure('Fox', Date.now());
    const id = (await fresh.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'simulator', model: 'sim-image-1', input: { prompt: 'a fox' } }, Date.now())).id;
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await fresh.tasks.get(id))!.status).toBe('PENDING');
    await fresh.close();
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
  });
});
