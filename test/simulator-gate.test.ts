import { chmodSync, readFileSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../main/simulator/server.ts';
import { tempDir } from './helpers/tmp.ts';

/**
 * The simulator refuses what the loopback host refuses, so a web page open on this machine can neither list its
 * jobs nor set its faults: a foreign Host (DNS rebinding), a foreign Origin, and any path without its secret.
 */

const running: RunningSimulator[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((sim) => sim.close()));
});

async function simulator(stateDir = tempDir()) {
  const sim = await startSimulator({ stateDir, jobMs: 50 });
  running.push(sim);
  const url = new URL(sim.url);
  return { sim, stateDir, port: url.port, secret: url.pathname.slice(1) };
}

/** A raw HTTP call, so the test can send the Host and Origin a hostile page would. */
function call(port: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: body === undefined ? 'GET' : 'POST', headers }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const submit = JSON.stringify({ input: { prompt: 'a fox' } });
const rejectAll = JSON.stringify({ submit: ['reject', 'reject', 'reject'] });

describe("the simulator's gate", () => {
  it('refuses a foreign Host, a foreign Origin and a path without its secret, and nothing they send changes anything', async () => {
    const { sim, port, secret } = await simulator();
    const own = { host: `127.0.0.1:${port}` };
    const refused: [string, string, Record<string, string>, string | undefined, number][] = [
      ['a rebound name', `/${secret}/v1/requests`, { host: `evil.example:${port}` }, undefined, 421],
      ['a rebound name', `/${secret}/_sim/faults`, { host: 'evil.example' }, rejectAll, 421],
      ['a rebound name', `/${secret}/v1/image/sim-image-1/requests`, { host: `evil.example:${port}` }, submit, 421],
      ['another site', `/${secret}/v1/requests`, { ...own, origin: 'http://evil.example' }, undefined, 403],
      ['another site', `/${secret}/_sim/charges`, { ...own, origin: `http://localhost:${Number(port) + 1}` }, undefined, 403],
      ['another site', `/${secret}/_sim/faults`, { ...own, origin: 'http://evil.example' }, rejectAll, 403],
      ['another site', `/${secret}/v1/image/sim-image-1/requests`, { ...own, origin: 'null' }, submit, 403],
      ['no secret', '/v1/requests', own, undefined, 404],
      ['no secret', '/_sim/charges', own, undefined, 404],
      ['no secret', '/_sim/faults', own, rejectAll, 404],
      ['no secret', '/v1/image/sim-image-1/requests', own, submit, 404],
      ['a wrong secret', `/${'0'.repeat(secret.length)}/_sim/faults`, own, rejectAll, 404],
      ['the secret not as the first segment', `/v1/${secret}/requests`, own, undefined, 404],
    ];
    for (const [what, path, headers, body, status] of refused) {
      const res = await call(port, path, headers, body);
      expect(res.status, `${what}: ${path}`).toBe(status);
      expect(res.text, what).not.toMatch(/request_id|requestId|"submit"/);
    }
    // Nothing was charged, and no fault was set: a submit with the secret is accepted.
    expect(sim.charges).toEqual([]);
    expect(sim.injected).toEqual([]);
    const accepted = await fetch(`${sim.url}/v1/image/sim-image-1/requests`, { method: 'POST', body: submit });
    expect(accepted.status).toBe(201);
    expect(sim.charges).toHaveLength(1);
  });

  it('answers its own address, by 127.0.0.1 or localhost, from its own origin or none', async () => {
    const { sim, port, secret } = await simulator();
    const sent = (await (await fetch(`${sim.url}/v1/image/sim-image-1/requests`, { method: 'POST', body: submit })).json()) as { request_id: string };
    const callers: Record<string, string>[] = [{ host: `127.0.0.1:${port}` }, { host: `localhost:${port}` }, { host: `LOCALHOST:${port}`, origin: `http://localhost:${port}` }, { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}` }];
    for (const headers of callers) {
      const listed = await call(port, `/${secret}/v1/requests`, headers);
      expect(listed.status, JSON.stringify(headers)).toBe(200);
      expect(JSON.parse(listed.text).requests.map((r: { request_id: string }) => r.request_id)).toEqual([sent.request_id]);
    }
    const faults = await call(port, `/${secret}/_sim/faults`, { host: `localhost:${port}` }, JSON.stringify({ submit: ['reject'] }));
    expect(faults.status).toBe(200);
    expect((await fetch(`${sim.url}/v1/image/sim-image-1/requests`, { method: 'POST', body: submit })).status).toBe(422);
    // A result's address is under the secret too, so it can be fetched as it is given.
    await new Promise((r) => setTimeout(r, 100));
    const result = (await (await fetch(`${sim.url}/v1/requests/${sent.request_id}/result`)).json()) as { outputs: { url: string }[] };
    expect(result.outputs[0]!.url).toBe(`${sim.url}/files/${sent.request_id}/0`);
    expect((await fetch(result.outputs[0]!.url)).status).toBe(200);
  });

  it('keeps one secret per data folder, readable by this user alone, so every process on the folder has the same', async () => {
    const { stateDir, secret } = await simulator();
    expect(secret).toMatch(/^[0-9a-f]{48}$/);
    const file = join(stateDir, 'secret');
    expect(readFileSync(file, 'utf8')).toBe(secret);
    if (process.platform !== 'win32') expect(statSync(file).mode & 0o777).toBe(0o600);
    const [second, third] = await Promise.all([simulator(stateDir), simulator(stateDir)]);
    expect([second.secret, third.secret]).toEqual([secret, secret]);
    // Without a folder, each run draws its own.
    const [a, b] = await Promise.all([startSimulator(), startSimulator()]);
    running.push(a, b);
    expect(new URL(a.url).pathname).not.toBe(new URL(b.url).pathname);
  });

  it.runIf(process.platform !== 'win32')('draws a new secret where the kept one could be read by others', async () => {
    const { stateDir, secret } = await simulator();
    chmodSync(join(stateDir, 'secret'), 0o644);
    const next = await simulator(stateDir);
    expect(next.secret).toMatch(/^[0-9a-f]{48}$/);
    expect(next.secret).not.toBe(secret);
    expect(statSync(join(stateDir, 'secret')).mode & 0o777).toBe(0o600);
  });
});
