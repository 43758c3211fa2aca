import { beforeAll, describe, expect, it } from 'vitest';
import { openStudio } from '../main/studio.ts';
import { FAL_MODEL, falQueue, realMedia, type FalOptions, type Ledger } from './fakes/providers.ts';
import { startFake, type FakeServer } from './fakes/server.ts';
import { runStudio, startStudio, writeSettings } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';
import { until } from './helpers/wait.ts';

/**
 * fal's answers as fal documents them, against real worker processes and a real SQLite file: a failed request's
 * error in its result URL's answer, cancel answered as fal's per-endpoint OpenAPI documents it, and URLs in a
 * submit answer that are not fal's. Charges are counted at the stand-in.
 */

let media: Awaited<ReturnType<typeof realMedia>>;
beforeAll(async () => {
  media = await realMedia();
}, 60_000);

/** A short poll deadline: a result error taken for a passing one would run into it and leave the outcome unknown. */
const ENGINE = { leaseMs: 60_000, tickMs: 100, poll: { intervalMs: 100, maxIntervalMs: 200, deadlineMs: 4_000 } };
const KEY = 'fal-key-0123456789';

async function setup(opts: FalOptions, engine = ENGINE) {
  const ledger: Ledger = { charged: [] };
  const fake = await startFake(falQueue(ledger, media.png, opts));
  const dataDir = tempDir();
  writeSettings(dataDir, { engine });
  const studio = await openStudio(dataDir);
  const project = await studio.projects.ensure('fal as documented', Date.now());
  const id = (await studio.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'fal', model: FAL_MODEL, input: { prompt: 'a fox' } }, Date.now())).id;
  await studio.close();
  return { ledger, fake, dataDir, id, env: { STUDIO_FAL_BASE_URL: fake.url, FAL_KEY: KEY } };
}

async function read(dataDir: string, id: number) {
  const studio = await openStudio(dataDir);
  try {
    const task = (await studio.tasks.get(id))!;
    return { task, events: await studio.tasks.events(id), spend: (await studio.tasks.spend(task.projectId))[0]! };
  } finally {
    await studio.close();
  }
}

const resultAsks = (fake: FakeServer) => fake.count('GET', /\/requests\/fal-req-1$/);

describe('a failed fal request, as fal reports it: COMPLETED, the error in the result answer', () => {
  it('a request error (504, X-Fal-Error-Type request_timeout) answered again ends the task: FAILED, not charged, nothing in the money views', async () => {
    const { ledger, fake, dataDir, id, env } = await setup({ resultError: 'request' });
    const started = Date.now();
    expect((await runStudio(dataDir, ['worker', '--until-idle'], env)).code).toBe(0);
    // Decided by the second answer, not left to run into the poll deadline and ask the person.
    expect(Date.now() - started).toBeLessThan(15_000);
    const { task, spend } = await read(dataDir, id);
    expect(task).toMatchObject({ status: 'FAILED', charged: 'no', remoteRequestId: 'fal-req-1' });
    expect(task.error).toMatch(/Request timed out \(request_timeout, HTTP 504\)/);
    expect(resultAsks(fake)).toBe(2);
    expect(spend).toMatchObject({ actual: 0, estimated: 0, possiblyCharged: 0 });
    expect(ledger.charged).toEqual(['fal-req-1']);
  });

  it('a model error (422 with a detail array) answered again ends the task: FAILED, possibly charged, shown as possibly charged', async () => {
    const { ledger, fake, dataDir, id, env } = await setup({ resultError: 'model' });
    expect((await runStudio(dataDir, ['worker', '--until-idle'], env)).code).toBe(0);
    const { task, spend } = await read(dataDir, id);
    expect(task).toMatchObject({ status: 'FAILED', charged: 'maybe' });
    expect(task.error).toMatch(/the model refused the request: prompt: The content could not be processed.*\(HTTP 422\)/);
    expect(resultAsks(fake)).toBe(2);
    expect(task.costEstimated).toBeGreaterThan(0);
    expect(spend).toMatchObject({ actual: 0, estimated: 0, possiblyCharged: task.costEstimated });
    expect(ledger.charged).toHaveLength(1);
  });

  it('a 502 without fal\'s markers stays a passing failure: asked again, and the paid result is collected', async () => {
    const { ledger, fake, dataDir, id, env } = await setup({ resultError: 'gateway' });
    expect((await runStudio(dataDir, ['worker', '--until-idle'], env)).code).toBe(0);
    expect((await read(dataDir, id)).task).toMatchObject({ status: 'SUCCEEDED', charged: 'yes' });
    expect(resultAsks(fake)).toBe(2);
    expect(ledger.charged).toHaveLength(1);
  });

  it('one answer with an error on the result URL, then the result: each paid result is collected, charged once', async () => {
    // fal-js's result() asks again on 429, 502, 503 and 504 (libs/client/src/queue.ts QUEUE_RETRY_CONFIG, retry.ts
    // DEFAULT_RETRYABLE_STATUS_CODES); a request that really failed answers the same again.
    const once: [number, unknown, Record<string, string>?][] = [
      [500, { detail: 'Internal Server Error', error_type: 'internal_error' }, { 'x-fal-error-type': 'internal_error' }],
      [429, { detail: 'Too many requests', error_type: 'rate_limited' }],
      [503, { detail: 'Service Unavailable' }, { 'x-fal-error-type': 'runner_scheduling_failure' }],
      [401, { detail: 'Unauthorized' }, { 'x-fal-error-type': 'unauthorized' }],
      [404, { detail: 'Request not found', error_type: 'not_found' }],
      [502, { detail: [{ msg: 'upstream connect error' }] }],
    ];
    const ledger: Ledger = { charged: [] };
    const fake = await startFake(falQueue(ledger, media.png, { resultOnceOf: (n) => once[n - 1] ?? null }));
    const dataDir = tempDir();
    writeSettings(dataDir, { engine: ENGINE });
    const studio = await openStudio(dataDir);
    const project = await studio.projects.ensure('fal as documented', Date.now());
    const ids: number[] = [];
    for (const [status] of once) {
      ids.push((await studio.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'fal', model: FAL_MODEL, input: { prompt: `a fox ${status}` } }, Date.now())).id);
    }
    await studio.close();
    expect((await runStudio(dataDir, ['worker', '--until-idle'], { STUDIO_FAL_BASE_URL: fake.url, FAL_KEY: KEY })).code).toBe(0);
    for (const [i, id] of ids.entries()) {
      const { task } = await read(dataDir, id);
      expect(task, `${once[i]![0]}`).toMatchObject({ status: 'SUCCEEDED', charged: 'yes', error: null, outputPath: expect.any(String) });
    }
    expect(ledger.charged).toHaveLength(once.length);
    for (const id of ledger.charged) expect(fake.count('GET', new RegExp(`/requests/${id}$`)), id).toBe(2);
  }, 120_000);
});

describe('fal retries its own server failures', () => {
  it('the submit does not send x-fal-no-retry: a run that failed on fal\'s runner is retried by fal, and the result collected, paid once', async () => {
    const { ledger, fake, dataDir, id, env } = await setup({ runnerFailsOnce: true });
    expect((await runStudio(dataDir, ['worker', '--until-idle'], env)).code).toBe(0);
    expect((await read(dataDir, id)).task).toMatchObject({ status: 'SUCCEEDED', charged: 'yes', remoteRequestId: 'fal-req-1' });
    const post = fake.seen.find((s) => s.method === 'POST')!;
    expect(post.headers).not.toHaveProperty('x-fal-no-retry');
    expect(ledger.charged).toEqual(['fal-req-1']);
  });
});

describe('cancel and the URLs fal gives', () => {
  it('a cancel answered {"success": true} (fal\'s OpenAPI): the task is kept, said so, and collected if the request finishes', async () => {
    // Each request runs for 40 status calls, so the cancel command arrives while it runs.
    const { ledger, fake, dataDir, id, env } = await setup({ cancelBody: { success: true }, polls: 40 }, { ...ENGINE, poll: { ...ENGINE.poll, deadlineMs: 60_000 } });
    const worker = startStudio(dataDir, ['worker', '--until-idle'], env);
    await until(async () => (await read(dataDir, id)).task.status === 'SUBMITTED');
    const cancel = await runStudio(dataDir, ['cancel', String(id)], env);
    expect(cancel.stderr).toBe('');
    expect(cancel.code).toBe(0);
    expect(cancel.stdout).toMatch(/not cancelled yet: asked fal to cancel request fal-req-1/);
    expect(await worker.exited).toBe(0);
    const { task, events } = await read(dataDir, id);
    expect(task).toMatchObject({ status: 'SUCCEEDED', charged: 'yes' });
    expect(events.map((e) => e.reason).join('\n')).toMatch(/asked fal to cancel request fal-req-1/);
    expect(fake.count('PUT', /\/requests\/fal-req-1\/cancel$/)).toBe(1);
    expect(ledger.charged).toHaveLength(1);
  });

  it('URLs in the submit answer off fal\'s queue host and the configured base are not followed: the request is reached by its id, the key stays home', async () => {
    const elsewhere = await startFake(() => undefined);
    const { ledger, fake, dataDir, id, env } = await setup({ urlsOn: elsewhere.url });
    expect((await runStudio(dataDir, ['worker', '--until-idle'], env)).code).toBe(0);
    expect((await read(dataDir, id)).task).toMatchObject({ status: 'SUCCEEDED', charged: 'yes', remoteRequestId: 'fal-req-1' });
    expect(elsewhere.seen).toEqual([]);
    expect(fake.count('GET', /^\/fal-ai\/flux\/requests\/fal-req-1\/status/)).toBeGreaterThan(0);
    expect(ledger.charged).toHaveLength(1);
  });
});
